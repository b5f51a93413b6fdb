import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../subgraphs/platform/config.ts';
import { MULTIPART_FILE_BYTES, registerMultipartBodies } from '../http/multipart-bodies.ts';
import { tokenAttemptLimiter } from '../protection/limits.ts';
import { areaTokenEndpoints, registerAreaTokenRoute } from './area-token-routes.ts';
import type { ClientStore } from './clients.ts';
import { registerTokenRoute, type TokenDeps } from './token-route.ts';

export interface TokenEndpointsOptions { config: Config; clients: ClientStore; privateKey: TokenDeps['privateKey'] }

/**
 * The token endpoints (the generic one, then the areas'), outside the token gate; failed attempts
 * counted in `sharedCounters` (rateLimitPlugin first).
 */
async function tokenEndpoints(app: FastifyInstance, { config, clients, privateKey }: TokenEndpointsOptions) {
  const limit = tokenAttemptLimiter(app, config, app.sharedCounters);
  const deps = { clients, privateKey, issuer: config.JWT_ISSUER, limit };
  registerTokenRoute(app, deps);
  if (MULTIPART_FILE_BYTES) await registerMultipartBodies(app, MULTIPART_FILE_BYTES);
  for (const endpoint of areaTokenEndpoints) registerAreaTokenRoute(app, deps, endpoint);
}

/**
 * Register on the root instance: multipart parsing serves the routes added after it (the areas' token
 * endpoints and every gated route), not the generic token endpoint.
 */
export const tokenEndpointsPlugin = fp(tokenEndpoints, { name: 'token-endpoints', dependencies: ['rate-limit'] });
