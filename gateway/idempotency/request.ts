import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { Kind, parse, type DocumentNode, type ParseOptions } from 'graphql';
import { KEY_MAX } from './entity.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';

const PRINTABLE = /^[\x20-\x7e]+$/;

/**
 * The key of an `Idempotency-Key` header: a Structured Field string (`"…"`, as the IETF draft
 * writes it) or the bare value many clients send. 1 to 255 printable ASCII characters; null when
 * the header is malformed.
 */
export function parseIdempotencyKey(header: string | string[]): string | null {
  if (Array.isArray(header)) return null;
  let key = header.trim();
  if (key.startsWith('"')) {
    // sf-string: a closing quote, and backslash escapes only of `"` and `\`.
    const quoted = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/.exec(key);
    if (!quoted) return null;
    key = quoted[1].replace(/\\(["\\])/g, '$1');
  }
  return key.length >= 1 && key.length <= KEY_MAX && PRINTABLE.test(key) ? key : null;
}

/**
 * What makes two requests "the same": method, path with query, and the body (canonical JSON for a
 * parsed body, so key order and spacing do not matter; the text as sent for a raw one).
 */
export function requestFingerprint(method: string, url: string, body: unknown): string {
  const text = body === undefined || body === null ? '' : typeof body === 'string' ? body : canonicalize(body) ?? '';
  return createHash('sha256').update(`${method.toUpperCase()} ${url}\n`).update(text).digest('hex');
}

/** The text of a document this process has seen under its APQ hash (Apollo Server's persisted-query cache). */
export type DocumentByHash = (sha256Hash: string) => Promise<string | undefined>;

/** A mutation sent to POST /graphql: what tells two requests apart (requestFingerprint's body), and its document. */
export interface GraphqlMutation { operation: object; document: DocumentNode }

/**
 * The mutation a POST /graphql body asks to run, or null when it runs none. Its document is the text
 * sent, or the one its APQ hash names (unknown here: Apollo answers PERSISTED_QUERY_NOT_FOUND and
 * runs nothing). The document counts by its sha256, which is the APQ hash: a full-text and a
 * hash-only send of one operation are the same request, whichever process has the text cached.
 */
export async function graphqlMutation(
  body: unknown, documentByHash: DocumentByHash, options: ParseOptions,
): Promise<GraphqlMutation | null> {
  if (typeof body !== 'object' || body === null) return null;
  const { query, variables, operationName, extensions } = body as { query?: unknown; variables?: unknown; operationName?: unknown; extensions?: { persistedQuery?: { sha256Hash?: unknown } } };
  const hash = extensions?.persistedQuery?.sha256Hash;
  const text = typeof query === 'string' ? query : typeof hash === 'string' ? await documentByHash(hash) : undefined;
  const document = text === undefined ? null : mutationDocument(text, options);
  if (!document) return null;
  const hashed = createHash('sha256').update(text!).digest('hex');
  return { operation: { document: hashed, variables: variables ?? null, operationName: operationName ?? null }, document };
}

/** The parsed document when it holds a mutation (a document that does not parse runs no mutation). */
function mutationDocument(text: string, options: ParseOptions): DocumentNode | null {
  try {
    const document = parse(text, options);
    const mutation = document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.operation === 'mutation');
    return mutation ? document : null;
  } catch {
    return null;
  }
}
