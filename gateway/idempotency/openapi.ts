import type { RestRoute } from '../../subgraphs/platform/rest/types.ts';
import { KEY_MAX } from './entity.ts';

/** True for the routes that take an Idempotency-Key (every POST and PATCH). */
export const takesIdempotencyKey = (route: Pick<RestRoute, 'method'>) => route.method === 'POST' || route.method === 'PATCH';

/**
 * No `example`: Swagger UI pre-fills a parameter's example on every Try it out, so a fixed key would make
 * the second Try it out a replay (or a 422) for 24 hours. The docs page sends a fresh UUID instead
 * (gateway/docs/page/docs.js) when the field is left empty.
 */
export const idempotencyKeyParameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'Makes a retry safe (IETF HTTPAPI draft "The Idempotency-Key HTTP Header Field"): send a fresh UUID per logical operation, and the same one only when retrying that operation. '
    + 'The first request with a key runs and its answer is kept for 24 hours for this client and organisation; '
    + 'a repeat with the same method, path and body gets that answer again with `Idempotent-Replayed: true`, and a different request with that key gets 422 IDEMPOTENCY_KEY_REUSED. '
    + 'The answer is replayed only to a token of the same client holding every scope of the first request\'s token '
    + '(another gets 403). An answer that carries a secret shown once (a new client secret, a webhook signing secret) '
    + 'is never kept: a repeat gets 409 IDEMPOTENT_SECRET_NOT_REPLAYED and the request does not run again. '
    + `Any 1 to ${KEY_MAX} printable ASCII characters are accepted, bare or as a quoted string; a UUID (e.g. from \`crypto.randomUUID()\`) is the usual choice. Server errors (5xx) and refusals of the caller (401, 403, 429) are not kept: the key may be retried. `
    + 'Try it out on the docs page sends a new UUID on every execution when this field is left empty; a key typed there is sent as typed.',
  // No `format: uuid`: the server accepts any printable key, and the contract says what the server does.
  schema: { type: 'string', minLength: 1, maxLength: KEY_MAX + 2 },
};

export const replayedHeader = {
  'Idempotent-Replayed': { description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
};

/** The success headers of an answer carrying a secret (never replayed, never cached). */
export const secretAnswerHeaders = {
  'Cache-Control': {
    description: '`no-store`: the answer carries a secret, shown this once', schema: { type: 'string', enum: ['no-store'] },
  },
};

/**
 * The problem responses an Idempotency-Key adds, merged with the route's own descriptions for those
 * statuses; `carriesSecret`: the route's success answer carries a secret, never replayed.
 */
export function idempotencyProblems(own: Record<number, string> = {}, carriesSecret = false): Record<number, string> {
  const add = (status: number, text: string) => (own[status] ? `${own[status]}; or ${text}` : text);
  const running = 'a request with the same Idempotency-Key is still running (see Retry-After)';
  return {
    403: add(403, 'the token lacks a scope of the token that made the request with this Idempotency-Key, '
      + 'whose answer is not replayed to it'),
    409: add(409, carriesSecret
      ? `${running}; or the request with this Idempotency-Key ran and its answer carried a secret, which is never kept, `
        + 'shown again or run again for: IDEMPOTENT_SECRET_NOT_REPLAYED'
      : running),
    422: add(422, 'the Idempotency-Key was used for a different request (method, path or body): IDEMPOTENCY_KEY_REUSED'),
  };
}
