/**
 * What a browser app on an origin of CORS_ORIGINS may do: every method the routes take, the request
 * headers the API reads, and the answer headers it sends for a client to read. One declaration:
 * gateway/http/browser-access.ts hands it to @fastify/cors, and the CORS table of docs/security.md lists it
 * (test/gateway/cors.test.ts checks the routes' methods and the table against it).
 */
export const CORS_METHODS = {
  GET: 'queries (`GET /graphql`), REST reads, graphql-sse streams',
  HEAD: 'what a GET answers, without the body',
  POST: 'GraphQL, REST creations and actions, the token endpoints, graphql-sse operations',
  PUT: 'REST replacements (e.g. `PUT .../enrollment`), a graphql-sse reservation (`PUT /graphql/stream`)',
  PATCH: 'REST partial updates (e.g. `PATCH /shared-mobility-insights/v2/users/{userId}`)',
  DELETE: 'REST deletions (e.g. a webhook subscription), ending an operation on a graphql-sse stream',
} as const;

export const CORS_REQUEST_HEADERS = {
  Authorization: 'the bearer token (or HTTP Basic on the token endpoints)',
  'Content-Type': '`application/json` (GraphQL, REST); the token endpoints\' form',
  'Idempotency-Key': 'POST and PATCH, GraphQL mutations: a retry is answered once',
  'If-None-Match': 'revalidating a cached answer (Risk Index): 304 while unchanged',
  'Last-Event-ID': 'graphql-sse: resume a stream after the last event received',
  'X-GraphQL-Event-Stream-Token': 'graphql-sse\'s single-connection mode: the reserved stream',
  'apollographql-client-name': 'Apollo Client\'s client awareness: the app\'s name',
  'apollographql-client-version': 'Apollo Client\'s client awareness: the app\'s version',
} as const;

export const CORS_EXPOSED_HEADERS = {
  'Retry-After': '429 and 503: seconds to wait before retrying',
  'x-request-id': 'the request\'s id, as the logs and traces name it',
  'Idempotent-Replayed': '`true` on an answer replayed for an Idempotency-Key',
  Location: 'a created resource\'s address (kept on idempotent replays; no path sends one today)',
  ETag: 'cacheable answers (Risk Index): the tag to send in If-None-Match',
  Link: 'paged answers: `rel="next"`',
  'Content-Disposition': 'files (Risk Index exports, roadside documents): the file name',
  'X-Sandbox': '`true` on every answer to a sandbox client\'s token (docs/sandbox.md)',
  'RateLimit-Policy': 'the quota policies that counted the answer: `"client";q=1200;w=60` (IETF draft)',
  RateLimit: 'where the caller stands in each: `"client";r=1187;t=42` (remaining, seconds to reset)',
  'X-RateLimit-Limit': 'requests a minute the client may make (kept for older clients: read `RateLimit`)',
  'X-RateLimit-Remaining': 'requests left in this minute (kept for older clients)',
  'X-RateLimit-Reset': 'seconds until the minute ends (kept for older clients)',
} as const;
