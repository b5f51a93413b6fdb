import { createHash } from 'node:crypto';
import { getOperationAST, parse, type ParseOptions } from 'graphql';
import { z } from 'zod';
import { badInput } from '../../subgraphs/platform/errors.ts';
import { DOCUMENT_ID_MAX, type MANIFEST_FORMATS } from './entities.ts';

/** Most documents one manifest may hold (an app ships hundreds; Apollo Router's lists are of that order too). */
export const MANIFEST_DOCUMENTS_MAX = 10_000;

export interface ManifestDocument { documentId: string; body: string; bodyHash: string; operationName: string | null }
export interface ParsedManifest { format: (typeof MANIFEST_FORMATS)[number]; documents: ManifestDocument[] }

export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

const documentId = z.string().min(1).max(DOCUMENT_ID_MAX).regex(/^[\x21-\x7e]+$/, 'a document id is printable ASCII without spaces');
const body = z.string().min(1);

/** Apollo's persisted query manifest, as `@apollo/generate-persisted-query-manifest` writes it. */
const apolloManifest = z.object({
  format: z.literal('apollo-persisted-query-manifest'),
  version: z.literal(1),
  operations: z.array(z.object({ id: documentId, name: z.string().optional(), type: z.enum(['query', 'mutation', 'subscription']).optional(), body }))
    .max(MANIFEST_DOCUMENTS_MAX),
});
/** GraphQL Code Generator's client preset `persisted-documents.json`: `{ "<hash>": "<document>" }`. */
const codegenManifest = z.record(documentId, body);

/**
 * Reads a manifest in either format. Every document must parse (within the gateway's token limit) and
 * hold one operation, which a request naming it by id runs; an id given twice with two texts is refused.
 */
export function parseManifest(value: unknown, parseOptions: ParseOptions): ParsedManifest {
  const isApollo = typeof value === 'object' && value !== null && 'format' in value;
  const parsed = isApollo ? apolloManifest.safeParse(value) : codegenManifest.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw badInput(`manifest.${issue.path.join('.')}: ${issue.message}`, 'manifest');
  }
  const entries = isApollo
    ? (parsed.data as z.infer<typeof apolloManifest>).operations.map((o) => [o.id, o.body] as const)
    : Object.entries(parsed.data as z.infer<typeof codegenManifest>);
  if (!entries.length) throw badInput('manifest: no documents', 'manifest');
  if (entries.length > MANIFEST_DOCUMENTS_MAX) throw badInput(`manifest: over ${MANIFEST_DOCUMENTS_MAX} documents`, 'manifest');
  const documents = new Map<string, ManifestDocument>();
  for (const [id, text] of entries) {
    const known = documents.get(id);
    if (known && known.body !== text) throw badInput(`manifest: the id ${id} names two different documents`, 'manifest');
    documents.set(id, { documentId: id, body: text, bodyHash: sha256Hex(text), operationName: operationNameOf(id, text, parseOptions) });
  }
  return { format: isApollo ? 'apollo' : 'codegen', documents: [...documents.values()] };
}

function operationNameOf(id: string, text: string, parseOptions: ParseOptions): string | null {
  let operation;
  try {
    operation = getOperationAST(parse(text, parseOptions));
  } catch (error) {
    throw badInput(`manifest: the document ${id} does not parse: ${(error as Error).message}`, 'manifest');
  }
  if (!operation) throw badInput(`manifest: the document ${id} must hold exactly one operation`, 'manifest');
  return operation.name?.value ?? null;
}
