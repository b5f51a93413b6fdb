import type { RestRoute } from '../rest/types.ts';
import { KEY_MAX } from './entity.ts';

/** True for the routes that take an Idempotency-Key (every POST and PATCH). */
export const takesIdempotencyKey = (route: Pick<RestRoute, 'method'>) => route.method === 'POST' || route.method === 'PATCH';

export const idempotencyKeyParameter = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'Makes a retry safe (IETF HTTPAPI draft "The Idempotency-Key HTTP Header Field"): the first request with a key runs and its answer is kept for 24 hours for this client and organisation; '
    + 'a repeat with the same method, path and body gets that answer again with `Idempotent-Replayed: true`. '
    + `1 to ${KEY_MAX} printable ASCII characters, bare or as a quoted string (e.g. a UUID). Server errors (5xx) and refusals of the caller (401, 403, 429) are not kept: the key may be retried.`,
  schema: { type: 'string', minLength: 1, maxLength: KEY_MAX + 2 },
  example: '"8e03978e-40d5-43e8-bc93-6894a57f9324"',
};

export const replayedHeader = {
  'Idempotent-Replayed': { description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key', schema: { type: 'string', enum: ['true'] } },
};

/** The problem responses an Idempotency-Key adds, merged with the route's own descriptions for those statuses. */
export function idempotencyProblems(own: Record<number, string> = {}): Record<number, string> {
  const add = (status: number, text: string) => (own[status] ? `${own[status]}; or ${text}` : text);
  return {
    409: add(409, 'a request with the same Idempotency-Key is still running (see Retry-After)'),
    422: add(422, 'the Idempotency-Key was used for a different request (method, path or body): IDEMPOTENCY_KEY_REUSED'),
  };
}
