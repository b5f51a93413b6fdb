import { statusForCode } from '../../subgraphs/platform/errors.ts';

/** Refusals about who asks, not what was asked (token, scope, rate): the request never ran, so they are not kept. */
const REFUSALS = new Set([401, 403, 429]);
/** Answers larger than this are not kept (the key is released): bounded storage per key. */
const MAX_STORED_BODY_BYTES = 1024 * 1024;
/** APQ answers asking for the document's text: nothing ran; Apollo Client retries with the text under the key. */
const PERSISTED_QUERY_CODES = new Set(['PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED']);

/**
 * Headers of the exchange rather than of the answer, never kept: the replaying request sets its own
 * (request id, rate-limit counters, CORS, which vary with it) or they mean nothing later (Date,
 * Retry-After) or belong to the connection.
 */
const PER_REQUEST = new RegExp('^(?:date|x-request-id|content-length|transfer-encoding|connection|keep-alive|retry-after|vary|set-cookie'
  + '|traceparent|tracestate|server-timing|idempotent-replayed|access-control-.*|x-ratelimit-.*|ratelimit.*)$');

interface GraphqlAnswer {
  data?: Record<string, unknown> | null;
  errors?: { extensions?: { code?: unknown }; path?: readonly unknown[] }[];
}

function parse(body: Buffer): GraphqlAnswer | null {
  try {
    return JSON.parse(body.toString('utf8')) as GraphqlAnswer;
  } catch {
    return null;
  }
}

/** A server-side failure (an error whose code maps to a 5xx, or no code at all), or a request for the document. */
const failedOrAsking = ({ errors }: GraphqlAnswer) => !!errors?.some(({ extensions }) =>
  PERSISTED_QUERY_CODES.has(extensions?.code as string) || statusForCode(extensions?.code) >= 500);

/**
 * A refusal of the caller: every error is one (UNAUTHENTICATED, FORBIDDEN, RATE_LIMITED) and every
 * root field answered is null with a refusal at its own path, so that nothing ran. A mutation field
 * that ran beside a refused one makes the answer one to keep (a retry must not run it twice).
 */
function refused({ data, errors }: GraphqlAnswer): boolean {
  const refusal = ({ extensions }: { extensions?: { code?: unknown } }) => REFUSALS.has(statusForCode(extensions?.code));
  if (!errors?.length || !errors.every(refusal)) return false;
  const at = new Set(errors.flatMap(({ path }) => (path?.length === 1 ? [path[0]] : [])));
  return Object.entries(data ?? {}).every(([field, value]) => value === null && at.has(field));
}

/**
 * Whether an answer is kept for replay. Not: a server error, a refusal of the caller (in either
 * protocol), or a body that cannot be kept (streamed, or over the bound); its key is released and a
 * retry runs again.
 */
export function keepable(status: number, body: Buffer | null, graphql: boolean): body is Buffer {
  if (!body || body.length > MAX_STORED_BODY_BYTES || status >= 500 || REFUSALS.has(status)) return false;
  if (!graphql) return true;
  const answer = parse(body);
  return !!answer && !failedOrAsking(answer) && !refused(answer);
}

/**
 * Whether the answer of a request that carries a secret holds one: a REST success, or a GraphQL
 * answer with any root field answered. A refusal of its input (400, 404, 409...) ran nothing and
 * holds none: it is kept and replayed as any other.
 */
export function holdsSecret(status: number, body: Buffer, graphql: boolean): boolean {
  if (!graphql) return status >= 200 && status < 300;
  const answer = parse(body);
  return !answer || Object.values(answer.data ?? {}).some((value) => value !== null);
}

/** The answer's own headers, as kept with it (a list joined as HTTP joins repeated fields). */
export function answerHeaders(headers: Record<string, string | number | readonly string[] | undefined>) {
  const kept = Object.entries(headers).filter(([name, value]) => value !== undefined && !PER_REQUEST.test(name));
  return Object.fromEntries(kept.map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value)]));
}
