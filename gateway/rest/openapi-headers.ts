import { CORS_EXPOSED_HEADERS } from '../http/cors-policy.ts';

/**
 * The headers every operation's answers carry, declared once (`components.headers`) and referenced
 * from each answer: the request's id on every answer; the RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers-10, gateway/protection/ratelimit-fields.ts) on its success
 * answers and its 429 (they are on every answer that counted against a limit; documenting them on
 * each error answer too would only grow the document, which Swagger UI renders whole).
 */
const member = (parameters: string) => `"[a-z-]+"${parameters}`;
const list = (parameters: string) => `^${member(parameters)}(, ${member(parameters)})*$`;

const POLICIES = 'Policies: `client` (RATE_LIMIT_PER_MINUTE requests a minute per client, per address '
  + 'without a token, over REST and GraphQL together), `issuer` (every user of one trusted issuer '
  + 'registration together), `token-address` and `token-client` (failed token attempts a minute from one '
  + 'address, and for one client id from one address: the token endpoints).';

export const answerHeaderComponents = {
  'X-Request-Id': { description: CORS_EXPOSED_HEADERS['x-request-id'], schema: { type: 'string' } },
  'RateLimit-Policy': {
    description: 'The quota policies that counted this answer, an RFC 8941 list: name, `q` quota, `w` window '
      + `in seconds. ${POLICIES}`,
    schema: { type: 'string', pattern: list(';q=[0-9]+;w=[0-9]+') },
    example: '"client";q=1200;w=60',
  },
  RateLimit: {
    description: 'Where the caller stands in each policy of RateLimit-Policy, an RFC 8941 list: name, '
      + '`r` what remains of the quota, `t` seconds until the window ends. At `r=0`, wait `t` seconds '
      + '(a 429 also says Retry-After). The request limit\'s answers also carry X-RateLimit-Limit, X-RateLimit-Remaining and '
      + 'X-RateLimit-Reset, saying the same of `client` for older clients (deprecated: read this field).',
    schema: { type: 'string', pattern: list(';r=[0-9]+;t=[0-9]+') },
    example: '"client";r=1187;t=42',
  },
};

type HeaderName = keyof typeof answerHeaderComponents;
const refs = (names: HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));

/** The answers that carry the RateLimit fields: success (304 included) and over the limit. */
const COUNTED = /^(2..|304|429)$/;

interface Operation { responses: Record<string, { headers?: Record<string, unknown> }> }

/** The operation with the common headers added to each of its answers (its own come first). */
export function withAnswerHeaders<T extends Operation>(operation: T): T {
  const responses = Object.fromEntries(Object.entries(operation.responses).map(([status, response]) => {
    const counted = COUNTED.test(status) ? ['RateLimit-Policy', 'RateLimit'] as const : [];
    const names: HeaderName[] = ['X-Request-Id', ...counted];
    return [status, { ...response, headers: { ...response.headers, ...refs(names) } }];
  }));
  return { ...operation, responses };
}
