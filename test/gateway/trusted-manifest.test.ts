/** Manifest files as the two tools write them, and the ones the admin API refuses (400 naming `manifest`). */
import { describe, expect, it } from 'vitest';
import { MANIFEST_DOCUMENTS_MAX, parseManifest, sha256Hex } from '../../gateway/trusted/manifest.ts';

const limits = { maxTokens: 5000 };
const refusal = (manifest: unknown) => {
  try {
    parseManifest(manifest, limits);
  } catch (error) {
    return (error as { message: string; extensions: Record<string, unknown> });
  }
  throw new Error('accepted');
};

describe('parseManifest', () => {
  it("reads Apollo's format and GraphQL Code Generator's, ids as given", () => {
    const apollo = parseManifest({
      format: 'apollo-persisted-query-manifest', version: 1,
      operations: [{ id: 'abc', name: 'Me', type: 'query', body: 'query Me { __typename }' }],
    }, limits);
    expect(apollo).toEqual({ format: 'apollo', documents: [{ documentId: 'abc', body: 'query Me { __typename }', bodyHash: sha256Hex('query Me { __typename }'), operationName: 'Me' }] });
    const codegen = parseManifest({ 'sha256:1': 'mutation Go { __typename }', 'two': '{ __typename }' }, limits);
    expect(codegen.format).toBe('codegen');
    expect(codegen.documents.map((d) => [d.documentId, d.operationName])).toEqual([['sha256:1', 'Go'], ['two', null]]);
  });

  it('refuses what no client could run by id', () => {
    const cases: [unknown, RegExp][] = [
      [{}, /no documents/],
      [[], /expected record/i],
      [{ format: 'apollo-persisted-query-manifest', version: 2, operations: [] }, /version/],
      [{ id: '{ broken' }, /does not parse/],
      [{ id: 'query A { __typename } query B { __typename }' }, /exactly one operation/],
      [{ 'with space': '{ __typename }' }, /Invalid key/],
      [{ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: 'x', body: '{ a }' }, { id: 'x', body: '{ b }' }] }, /names two different documents/],
      [{ id: `{ ${'a '.repeat(6000)}}` }, /does not parse/],
      [Object.fromEntries(Array.from({ length: MANIFEST_DOCUMENTS_MAX + 1 }, (_, i) => [`d${i}`, '{ __typename }'])), /over 10000 documents/],
    ];
    for (const [manifest, message] of cases) {
      const error = refusal(manifest);
      expect(error.message, JSON.stringify(manifest).slice(0, 80)).toMatch(message);
      expect(error.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'manifest' });
    }
  });
});
