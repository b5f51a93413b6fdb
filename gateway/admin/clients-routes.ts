import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { RevocationCheck } from '../auth/revocation.ts';
import { ORGANISATION_PATTERN, organisationName } from '../../subgraphs/platform/organisation.ts';
import { parseScopes, type ClientStore } from '../auth/clients.ts';
import { adminBodyErrors, adminErrors, adminHandler, adminSecurity, idParam, parseInput, problem } from './admin-api.ts';

export const ADMIN_CLIENTS_PATH = '/platform/admin/v1/clients';

const createBody = z.object({
  organisation: organisationName,
  scopes: z.array(z.string()).min(1).max(10).default(['b2b', 'roadside']),
  /** A client of `<organisation>-sandbox` instead (docs/sandbox.md). */
  sandbox: z.boolean().default(false),
}).strict();

/**
 * The operator API for API clients (create, list, rotate, disable, enable), behind the `admin`
 * scope. Registered inside the token gate's scope. Every change reaches the database at once; other
 * gateway processes and listening subgraphs see it within the revocation bound (REVOCATION_CACHE_MS),
 * this one immediately.
 */
export function registerAdminClientRoutes(api: FastifyInstance, clients: ClientStore, revocation: RevocationCheck) {
  const clientIdOf = (request: FastifyRequest) => idParam(request, 'clientId');

  // A new or rotated secret is shown in this answer only: never kept for an Idempotency-Key replay
  // (documented in adminClientPaths).
  const secret = { config: { carriesSecret: true } };
  api.post(ADMIN_CLIENTS_PATH, secret, adminHandler(async (request, reply) => {
    const body = parseInput(createBody, request.body);
    const scopes = parseScopes(body.scopes);
    const created = body.sandbox ? await clients.createSandbox(body.organisation, scopes) : await clients.create(body.organisation, scopes);
    return reply.code(201).header('cache-control', 'no-store').send(created);
  }));
  api.get(ADMIN_CLIENTS_PATH, adminHandler(async () => ({
    clients: (await clients.list()).map((c) => ({
      clientId: c.clientId, organisation: c.organisation, scopes: c.scopes, disabled: c.disabled, sandbox: c.sandbox,
      createdAt: c.createdAt.toISOString(), secretRotatedAt: c.secretRotatedAt.toISOString(), secretGeneration: c.secretGeneration,
    })),
  })));
  api.post(`${ADMIN_CLIENTS_PATH}/:clientId/rotate`, secret, adminHandler(async (request, reply) => {
    const clientId = clientIdOf(request);
    const rotated = await clients.rotate(clientId);
    revocation.forget(clientId);
    return reply.header('cache-control', 'no-store').send(rotated);
  }));
  for (const action of ['disable', 'enable'] as const) {
    api.post(`${ADMIN_CLIENTS_PATH}/:clientId/${action}`, adminHandler(async (request) => {
      const clientId = clientIdOf(request);
      await clients.setDisabled(clientId, action === 'disable');
      revocation.forget(clientId);
      return { clientId, disabled: action === 'disable' };
    }));
  }
}

const credentials = {
  type: 'object',
  properties: {
    clientId: { type: 'string' }, clientSecret: { type: 'string', description: 'Shown only in this response' }, organisation: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } }, sandbox: { type: 'boolean' }, liveOrganisation: { type: 'string' },
  },
  required: ['clientId', 'clientSecret', 'organisation', 'scopes'],
};
const errors = adminErrors;
const bodyErrors = adminBodyErrors;
const clientIdParameter = { name: 'clientId', in: 'path', required: true, schema: { type: 'string' } };
const security = adminSecurity;

/** OpenAPI paths of the admin API. */
export const adminClientPaths = {
  [ADMIN_CLIENTS_PATH]: {
    post: {
      operationId: 'createClient', summary: 'Create an API client (operators: admin scope)', tags: ['Admin'], security,
      carriesSecret: true,
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', properties: { organisation: { type: 'string', pattern: ORGANISATION_PATTERN.source }, scopes: { type: 'array', items: { type: 'string', enum: ['b2b', 'roadside', 'admin'] }, default: ['b2b', 'roadside'] }, sandbox: { type: 'boolean', default: false, description: 'A client of `<organisation>-sandbox`, made and linked on first use' } }, required: ['organisation'], additionalProperties: false } } } },
      responses: { 201: { description: 'The new client and its secret', content: { 'application/json': { schema: credentials } } }, 409: problem('A client with that id exists'), ...bodyErrors, ...errors },
    },
    get: {
      operationId: 'listClients', summary: 'List API clients (operators: admin scope)', tags: ['Admin'], security,
      responses: {
        200: { description: 'Every client, without secrets', content: { 'application/json': { schema: { type: 'object', properties: { clients: { type: 'array', items: { type: 'object', properties: { clientId: { type: 'string' }, organisation: { type: 'string' }, scopes: { type: 'array', items: { type: 'string' } }, disabled: { type: 'boolean' }, sandbox: { type: 'boolean' }, createdAt: { type: 'string', format: 'date-time' }, secretRotatedAt: { type: 'string', format: 'date-time' }, secretGeneration: { type: 'integer' } }, required: ['clientId', 'organisation', 'scopes', 'disabled'] } } }, required: ['clients'] } } } },
        ...errors,
      },
    },
  },
  [`${ADMIN_CLIENTS_PATH}/{clientId}/rotate`]: {
    post: {
      operationId: 'rotateClientSecret', summary: 'Rotate a client secret; every token issued before is refused (operators: admin scope)',
      tags: ['Admin'], security, carriesSecret: true, parameters: [clientIdParameter],
      responses: { 200: { description: 'The new secret', content: { 'application/json': { schema: credentials } } }, 404: problem('Unknown client'), ...errors },
    },
  },
  ...Object.fromEntries((['disable', 'enable'] as const).map((action) => [`${ADMIN_CLIENTS_PATH}/{clientId}/${action}`, {
    post: {
      operationId: `${action}Client`, summary: action === 'disable' ? 'Disable a client; its tokens are refused (operators: admin scope)' : 'Enable a client again; tokens issued before a disable stay refused (operators: admin scope)',
      tags: ['Admin'], security, parameters: [clientIdParameter],
      responses: { 200: { description: 'The client state', content: { 'application/json': { schema: { type: 'object', properties: { clientId: { type: 'string' }, disabled: { type: 'boolean' } }, required: ['clientId', 'disabled'] } } } }, 404: problem('Unknown client'), ...errors },
    },
  }])),
};
