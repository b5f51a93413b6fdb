/**
 * HTTP caching of public reads (RFC 9111, conditional requests per RFC 9110 13.1.2): a strong ETag,
 * `Cache-Control: public, max-age`, and 304 without a body when the caller's `If-None-Match` names it.
 * With the version of the data behind the answer known (the Risk Index: data, model and code,
 * the risk area's data/version.ts), the tag is of that version and of the canonical request, so a
 * revalidation is answered before any evaluation; else (a remote risk subgraph) of the answer's bytes.
 */
import { createHash } from 'node:crypto';
import type { JsonSchema } from '../../subgraphs/platform/rest/types.ts';

export const etagOf = (bytes: string | Buffer) => `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`;

/** The tag of an answer known before it is evaluated: of the data's version, the path and what the answer depends on in the request. */
export const versionTagOf = (version: string, path: string, request: unknown) => etagOf(`${version}\n${path}\n${JSON.stringify(request)}`);

/**
 * RFC 9110 13.1.2: `*` (unless `star` is false: before evaluation, `*` would answer 304 to a request
 * that fails), or any listed tag equal to ours under weak comparison (a `W/` prefix ignored).
 */
export function matchesIfNoneMatch(header: string | string[] | undefined, etag: string, star = true): boolean {
  if (header === undefined) return false;
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value.trim() === '*') return star;
  const opaque = etag.replace(/^W\//, '');
  return (value.match(/(?:W\/)?"[^"]*"/g) ?? []).some((tag) => tag.replace(/^W\//, '') === opaque);
}

export const cacheControl = (maxAge: number) => `public, max-age=${maxAge}`;

/** OpenAPI: the If-None-Match parameter, the success headers and the 304 of a cacheable read. */
export const cacheDocs = (maxAge: number) => ({
  parameter: {
    name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' }, example: '"Jv2yYQ0n3Xk8pD1cR7tWm5sLhA4"',
    description: 'ETag(s) of an answer held (or `*`): an unchanged answer is 304 without a body',
  },
  headers: {
    ETag: { description: 'Strong tag of the answer: of the loaded data\'s version and the request (the same until an ingest or a new model or code version), so a revalidation costs no evaluation; absent (and Cache-Control no-store) while the crash data are loading', schema: { type: 'string' } },
    'Cache-Control': { description: `\`${cacheControl(maxAge)}\` once the data are loaded; \`no-store\` while they are loading`, schema: { type: 'string' } },
  } satisfies Record<string, { description: string; schema: JsonSchema }>,
  notModified: { description: 'Not modified: the If-None-Match tag is the current answer\'s (ETag and Cache-Control repeated, no body)' },
});

export const noStoreDocs = {
  'Cache-Control': { description: '`no-store`: the answer includes real-time traffic', schema: { type: 'string' } },
} satisfies Record<string, { description: string; schema: JsonSchema }>;
