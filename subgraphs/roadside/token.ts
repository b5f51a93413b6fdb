import type { TokenEndpoint } from '../platform/subgraph.ts';

/**
 * The roadside services' token endpoint (`POST .../oauth/accesstoken?grant_type=client_credentials`,
 * client authenticated with HTTP Basic): a token carries the `roadside` scope unless the client asks
 * for others, a client without it is refused, and the answer has the original service's shape.
 */
export const roadsideToken: TokenEndpoint = {
  path: '/services/roadside/v1/oauth/accesstoken',
  scopes: (granted) => (granted.includes('roadside') ? ['roadside'] : null),
  refusal: 'this client may not use the roadside services',
  answer: (grant, lifetimeSeconds) => ({
    access_token: grant.accessToken,
    token_type: 'Bearer',
    expires_in: String(lifetimeSeconds),
    issued_at: String(Date.now()),
    scope: grant.scopes.join(' '),
    client_id: grant.clientId,
    status: 'approved',
  }),
  openapi: {
    operationId: 'roadsideAccessToken',
    summary: 'Roadside OAuth 2.0 client-credentials token '
      + '(HTTP Basic client auth; grant_type in the query or the body)',
    description: 'The roadside services\' token endpoint. The client is authenticated with HTTP Basic (or '
      + 'client_id/client_secret in the body) and must be allowed the `roadside` scope; the token carries that scope '
      + 'only. As in the original service, `expires_in` and `issued_at` (milliseconds since the epoch) are strings.',
    parameters: [{
      name: 'grant_type', in: 'query', required: false, description: 'May be sent here instead of in the body',
      schema: { type: 'string', enum: ['client_credentials'] },
    }],
    requestBody: {
      required: false,
      content: Object.fromEntries(['application/x-www-form-urlencoded', 'application/json'].map((t) => [t, {
        schema: {
          type: 'object',
          properties: {
            grant_type: { type: 'string', enum: ['client_credentials'] }, client_id: { type: 'string' },
            client_secret: { type: 'string' }, scope: { type: 'string', example: 'roadside' },
          },
        },
      }])),
    },
    response: {
      type: 'object',
      properties: {
        access_token: { type: 'string' }, token_type: { type: 'string', enum: ['Bearer'] },
        expires_in: { type: 'string', pattern: '^[0-9]+$', example: '3600', description: 'Seconds, as a string' },
        issued_at: {
          type: 'string', pattern: '^[0-9]+$', example: '1767225600000',
          description: 'Milliseconds since the epoch, as a string',
        },
        scope: { type: 'string', example: 'roadside' }, client_id: { type: 'string' },
        status: { type: 'string', enum: ['approved'] },
      },
      required: ['access_token', 'token_type', 'expires_in', 'issued_at', 'scope', 'client_id', 'status'],
    },
    badRequest: 'invalid_request (including client credentials in the query string, RFC 6749 2.3.1), '
      + 'unsupported_grant_type, or invalid_scope (a client not allowed the roadside scope) (RFC 6749 5.2); '
      + 'a body that cannot be parsed is a problem',
    securityScheme: {
      name: 'roadsideOAuth2',
      description: 'OAuth 2.0 client credentials at the roadside services\' own token endpoint '
        + '(client id and secret in HTTP Basic); its token carries the `roadside` scope only.',
      scopes: { roadside: 'Roadside rescue' },
    },
  },
};
