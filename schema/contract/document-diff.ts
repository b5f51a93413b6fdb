import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import type * as GraphQL from 'graphql';
import { Supergraph } from '@apollo/federation-internals';
import pg from 'pg';
import { parseManifest } from '../../gateway/trusted/manifest.ts';
import type { BreakingChange } from './change.ts';

// The CommonJS graphql, which federation-internals builds the API schema with (see gateway/subscriptions/document.ts).
const cjs = createRequire(import.meta.url)('graphql') as typeof GraphQL;

/** A document clients send by id: where it is registered (an owner in the database, or a manifest file) and its text. */
export interface CheckedDocument { where: string; documentId: string; operationName: string | null; body: string }

/** Every document of a manifest file (`--documents`), named by the file. */
export async function documentsOfFile(path: string): Promise<CheckedDocument[]> {
  const manifest = parseManifest(JSON.parse(await readFile(path, 'utf8')), {});
  return manifest.documents.map((d) => ({ where: basename(path), documentId: d.documentId, operationName: d.operationName, body: d.body }));
}

/** Every document of a manifest in force in the gateway's database (DATABASE_URL); none before its tables exist. */
export async function documentsOfDatabase(databaseUrl: string): Promise<CheckedDocument[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ owner_kind: string; owner_id: string; document_id: string; operation_name: string | null; body: string }>(
      `select m.owner_kind, m.owner_id, d.document_id, d.operation_name, d.body
       from "platform"."trusted_documents" d join "platform"."trusted_manifests" m on m.id = d.manifest_id where m.retired_at is null`,
    ).catch((error: { code?: string }) => {
      if (error.code === '42P01') return { rows: [] };
      throw error;
    });
    return rows.map((r) => ({ where: `${r.owner_kind}:${r.owner_id}`, documentId: r.document_id, operationName: r.operation_name, body: r.body }));
  } finally {
    await client.end();
  }
}

const errorsAgainst = (schema: GraphQL.GraphQLSchema, body: string) => cjs.validate(schema, cjs.parse(body)).map((e) => e.message);
const apiSchemaOf = (sdl: string) => Supergraph.build(sdl).apiSchema().toGraphQLJSSchema() as unknown as GraphQL.GraphQLSchema;

/**
 * The registered documents the new supergraph breaks: each valid against the baseline's API schema and
 * not against the new one (a document invalid before is not this change's doing), as a breaking change
 * `document <where>/<id>` that CHANGELOG.md must acknowledge, naming the operation and the first error.
 */
export function documentBreakingChanges(baselineSdl: string, sdl: string, documents: readonly CheckedDocument[]): BreakingChange[] {
  if (!documents.length || baselineSdl === sdl) return [];
  const before = apiSchemaOf(baselineSdl);
  const after = apiSchemaOf(sdl);
  return documents.flatMap((d) => {
    const errors = errorsAgainst(after, d.body);
    if (!errors.length || errorsAgainst(before, d.body).length) return [];
    return [{ kind: 'DOCUMENT_BROKEN', location: `${d.where}/${d.documentId}`, message: `${d.operationName ?? 'anonymous operation'}: ${errors[0]}` }];
  });
}
