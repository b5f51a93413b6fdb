import type { RestRoute } from '../../subgraphs/platform/rest/types.ts';
import type { TokenEndpoint } from '../../subgraphs/platform/subgraph.ts';
import { TOKEN_PATH } from '../auth/token-route.ts';
import { areaTokenEndpoints } from '../auth/area-token-routes.ts';
import {
  idempotencyKeyParameter, idempotencyProblems, replayedHeader, secretAnswerHeaders, takesIdempotencyKey,
} from '../idempotency/openapi.ts';
import { selectsSecret } from '../idempotency/secrets.ts';
import { adminClientPaths } from '../admin/clients-routes.ts';
import { adminDocumentPaths } from '../admin/documents-routes.ts';
import { adminIssuerPaths } from '../admin/issuers-routes.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { withExamples } from './examples.ts';
import { webhooksSection } from './openapi-webhooks.ts';
import { cacheDocs, noStoreDocs } from './http-cache.ts';
import { componentSchemas } from '../../subgraphs/platform/rest/components.ts';
import { answerHeaderComponents, withAnswerHeaders } from './openapi-headers.ts';
import { securityFor, securitySchemes } from './openapi-security.ts';

const DESCRIPTION = [
  'Each path runs the same GraphQL resolvers as /graphql. Errors are application/problem+json (RFC 9457).',
  ...Object.values(subgraphDefinitions).flatMap(({ restIntro }) => (restIntro ? [restIntro] : [])),
].join(' ');

const problemSchema = {
  type: 'object',
  description: 'RFC 9457 problem details; a problem type may add members (e.g. `resource` and `id` of what was not found)',
  additionalProperties: true,
  properties: {
    type: { type: 'string' }, title: { type: 'string' }, status: { type: 'integer' }, detail: { type: 'string' },
    code: { type: 'string', description: 'Same code as the GraphQL error extensions.code' },
    field: { type: 'string', description: 'The input at fault, when one is' },
    instance: { type: 'string' }, requestId: { type: 'string' },
    errors: { type: 'array', items: { type: 'object', properties: { message: { type: 'string' }, field: { type: 'string' }, code: { type: 'string' } } } },
  },
  required: ['type', 'title', 'status', 'detail', 'code'],
};

const problemResponse = (description: string) => ({ description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });

/** Body or query members that name something that must already exist: an unknown one answers 404. */
const REFERENCE = /^(sessionId|requestId|reqId|userId|userID|VIN|vehicleId|deviceId|deviceID)$/;

/** Whether a request can name something unknown (404): an id in the path, or a reference in the body or a lookup's query. */
function canBeUnknown(route: RestRoute): boolean {
  if (route.path.includes(':')) return true;
  const bodyNames = Object.keys((route.docs?.requestBody?.properties ?? {}) as Record<string, unknown>);
  // A list's query only filters (no match is an empty list); a single lookup's query names what it reads.
  const queryNames = /^list/.test(route.operationId) ? [] : Object.keys(route.docs?.query ?? {});
  return [...bodyNames, ...queryNames].some((name) => REFERENCE.test(name));
}

/** `/users/:userId` → `/users/{userId}` */
const openApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function operation(route: RestRoute) {
  const params = [...route.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => {
    const { description, ...schema } = route.docs?.params?.[m[1]] ?? {};
    return { name: m[1], in: 'path', required: true, ...(description ? { description } : {}), schema: { type: 'string', ...schema } };
  });
  const query = Object.entries(route.docs?.query ?? {}).map(([name, { required, description, example, ...schema }]) => ({
    name, in: 'query', required: !!required, description, schema, ...(example !== undefined ? { example } : {}),
  }));
  const status = String(route.status ?? 200);
  const contentTypes = route.docs?.contentTypes ?? ['application/json'];
  const idempotent = takesIdempotencyKey(route);
  // An answer with a secret is never replayed: no Idempotent-Replayed on it.
  const secret = idempotent && selectsSecret(route.operation);
  const replayed = idempotent && !secret;
  const cache = route.cache && route.cache !== 'no-store' ? cacheDocs(route.cache.maxAge) : undefined;
  const scoped: Record<number, string> = route.scope && route.scope !== 'any' ? { 403: 'Token lacks the scope' } : {};
  const problems = idempotent
    ? { ...route.docs?.problems, ...idempotencyProblems({ ...scoped, 409: 'State conflict', ...route.docs?.problems }, secret) }
    : route.docs?.problems ?? {};
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: route.docs?.description,
    tags: [route.tag],
    security: route.scope ? securityFor(route.scope) : [],
    parameters: [...params, ...query, ...(idempotent ? [idempotencyKeyParameter] : []), ...(cache ? [cache.parameter] : [])],
    ...(route.docs?.requestBody ? {
      requestBody: {
        required: true,
        content: Object.fromEntries(contentTypes.map((t) => [t, { schema: route.docs?.requestContent?.[t] ?? route.docs?.requestBody, ...(route.docs?.requestExample !== undefined ? { example: route.docs.requestExample } : {}) }])),
      },
    } : {}),
    responses: {
      [status]: status === '204' ? { description: 'No content', ...(replayed ? { headers: replayedHeader } : {}) } : {
        description: 'Success',
        ...(idempotent || route.docs?.responseHeaders || route.cache ? {
          headers: {
            ...(replayed ? replayedHeader : secret ? secretAnswerHeaders : {}), ...route.docs?.responseHeaders,
            ...(cache ? cache.headers : route.cache ? noStoreDocs : {}),
          },
        } : {}),
        content: route.docs?.responseContentTypes
          ? Object.fromEntries(route.docs.responseContentTypes.map((t) => [t, { schema: { type: 'string', format: 'binary' } }]))
          : route.docs?.responseContent
            ? Object.fromEntries(Object.entries(route.docs.responseContent).map(([t, schema]) => [t, { schema }]))
            : { [route.docs?.responseContentType ?? 'application/json']: { schema: route.docs?.response ?? {} } },
      },
      ...(cache ? { 304: cache.notModified } : {}),
      ...(params.length || query.length || route.docs?.requestBody || idempotent ? { 400: problemResponse('Invalid input') } : {}),
      ...(route.scope ? { 401: problemResponse('Missing, invalid or expired token') } : {}),
      ...(route.scope && route.scope !== 'any' ? { 403: problemResponse('Token lacks the scope') } : {}),
      ...(canBeUnknown(route) ? { 404: problemResponse('Unknown id') } : {}),
      414: problemResponse('A path parameter over 1000 characters, or a URL over 16 KiB'),
      431: problemResponse('Request line and headers over 16 KiB'),
      // A read changes nothing, so it never conflicts; only a body can be too large or of the wrong type.
      ...(route.method !== 'GET' ? { 409: problemResponse('State conflict') } : {}),
      ...(route.docs?.requestBody ? { 413: problemResponse('Request body too large') } : {}),
      ...(route.docs?.requestBody && !route.rawBody ? { 415: problemResponse(`Unsupported content type (accepted: ${contentTypes.join(', ')})`) } : {}),
      // Every REST route is behind the per-client (or per-address) request limit and runs on the subgraphs and the database.
      429: problemResponse('Rate limit exceeded (see Retry-After)'),
      503: problemResponse('A subgraph or the database is unavailable, or the service is overloaded (see Retry-After)'),
      ...Object.fromEntries(Object.entries(problems).map(([status, text]) => [status, problemResponse(text)])),
    },
  };
}

interface HandWrittenOperation {
  parameters?: unknown[];
  responses: Record<string, { description: string; headers?: object }>;
  /** Its success answer carries a secret, never replayed (the route's `config.carriesSecret`); not written out. */
  carriesSecret?: boolean;
}

/** A hand-written POST or PATCH operation takes an Idempotency-Key like the table's rows: documented the same way. */
function idempotentOperation(method: string, { carriesSecret = false, ...op }: HandWrittenOperation) {
  if (!takesIdempotencyKey({ method: method.toUpperCase() as RestRoute['method'] })) return op;
  const own = Object.fromEntries(Object.entries(op.responses).map(([status, r]) => [status, r.description]));
  const successHeaders = carriesSecret ? secretAnswerHeaders : replayedHeader;
  const responses = Object.fromEntries(Object.entries(op.responses).map(([status, r]) =>
    [status, status.startsWith('2') ? { ...r, headers: { ...r.headers, ...successHeaders } } : r]));
  for (const [status, text] of Object.entries(idempotencyProblems(own, carriesSecret))) responses[status] = problemResponse(text);
  responses[400] ??= problemResponse('Invalid input (an Idempotency-Key that is not a printable key)');
  return { ...op, parameters: [...op.parameters ?? [], idempotencyKeyParameter], responses };
}

/** The hand-written operations (the admin API), each as idempotentOperation documents it. */
function withIdempotency(paths: Record<string, Record<string, HandWrittenOperation>>) {
  return Object.fromEntries(Object.entries(paths).map(([path, item]) =>
    [path, Object.fromEntries(Object.entries(item).map(([method, op]) => [method, idempotentOperation(method, op)]))]));
}

/** An RFC 6749 5.2 error body, as the token endpoints answer their refusals. */
const tokenErrorSchema = {
  type: 'object',
  properties: { error: { type: 'string', enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unauthorized_client', 'unsupported_grant_type', 'invalid_scope', 'too_many_requests'] }, error_description: { type: 'string' } },
  required: ['error'],
};
const tokenError = (description: string, headers?: object) => ({ description, ...(headers ? { headers } : {}), content: { 'application/json': { schema: tokenErrorSchema } } });
const retryAfter = { 'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'string', pattern: '^[0-9]+$' } } };

/** The refusals every token endpoint answers alike, after its 400 and 401. */
const tokenRefusals = {
  429: tokenError('too_many_requests: too many attempts for this client id or address', retryAfter),
  413: problemResponse('Request body too large'),
  414: problemResponse('A URL over 16 KiB'),
  415: problemResponse('Unsupported content type (accepted: application/x-www-form-urlencoded, application/json)'),
  431: problemResponse('Request line and headers over 16 KiB'),
  503: problemResponse('The service is overloaded or the database is unavailable (see Retry-After)'),
};
const tokenBadRequest = (description: string) => ({
  description,
  content: {
    'application/json': { schema: tokenErrorSchema },
    'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
  },
});

/** An area's token endpoint (SubgraphDefinition.tokenEndpoint): its own parts, the refusals of every token endpoint. */
function areaTokenOperation({ openapi }: TokenEndpoint) {
  const { operationId, summary, description, parameters, requestBody, response, badRequest } = openapi;
  return {
    operationId, summary, description, tags: ['Token'], security: [],
    ...(parameters ? { parameters } : {}), requestBody,
    responses: {
      200: { description: 'Token', content: { 'application/json': { schema: response } } },
      400: tokenBadRequest(badRequest),
      401: tokenError('invalid_client (with WWW-Authenticate: Basic when HTTP Basic was used)', {
        'WWW-Authenticate': { schema: { type: 'string' } },
      }),
      ...tokenRefusals,
    },
  };
}

/** The OpenAPI 3.1 document, generated from the REST table. */
export function buildOpenApi(routes: readonly RestRoute[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method.toLowerCase()] = operation(route);
  }
  paths[TOKEN_PATH] = {
    post: {
      operationId: 'generateToken', summary: 'OAuth 2.0 client-credentials token (form or JSON body, or HTTP Basic client auth)', tags: ['Token'], security: [],
      requestBody: {
        required: true,
        content: Object.fromEntries(['application/x-www-form-urlencoded', 'application/json'].map((t) => [t, {
          schema: { type: 'object', properties: { grant_type: { type: 'string', enum: ['client_credentials'] }, client_id: { type: 'string' }, client_secret: { type: 'string' }, scope: { type: 'string', example: 'b2b' } }, required: ['grant_type'] },
        }])),
      },
      responses: {
        200: { description: 'Token', content: { 'application/json': { schema: { type: 'object', properties: { access_token: { type: 'string' }, token_type: { type: 'string', enum: ['Bearer'] }, expires_in: { type: 'integer', example: 3600 }, scope: { type: 'string' } }, required: ['access_token', 'token_type', 'expires_in', 'scope'] } } } },
        400: tokenBadRequest('invalid_request (including client credentials sent in the query string, refused per RFC 6749 2.3.1), unsupported_grant_type or invalid_scope (RFC 6749 5.2); a body that cannot be parsed is a problem'),
        401: tokenError('invalid_client'),
        ...tokenRefusals,
      },
    },
  };
  for (const endpoint of areaTokenEndpoints) paths[endpoint.path] = { post: areaTokenOperation(endpoint) };
  Object.assign(paths, withIdempotency(adminClientPaths), withIdempotency(adminIssuerPaths), withIdempotency(adminDocumentPaths));
  for (const [path, item] of Object.entries(paths)) {
    paths[path] = Object.fromEntries(Object.entries(item)
      .map(([method, op]) => [method, withAnswerHeaders(op as Parameters<typeof withAnswerHeaders>[0])]));
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Fleet mobility and insurance risk: REST compatibility paths', version: '1.0.0', description: DESCRIPTION },
    servers: [{ url: '/' }],
    paths: withExamples(paths),
    webhooks: webhooksSection(routes),
    components: {
      securitySchemes,
      schemas: { Problem: problemSchema, ...componentSchemas() },
      headers: answerHeaderComponents,
    },
  };
}
