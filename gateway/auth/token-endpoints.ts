import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../subgraphs/platform/config.ts';
import { tokenAttemptLimiter } from '../protection/limits.ts';
import type { ClientStore } from './clients.ts';
import { registerRoadsideRoutes } from './roadside-token-route.ts';
import { registerTokenRoute, type TokenDeps } from './token-route.ts';

export interface TokenEndpointsOptions { config: Config; clients: ClientStore; privateKey: TokenDeps['privateKey'] }

/** The token endpoints, outside the token gate; failed attempts counted in `sharedCounters` (rateLimitPlugin first). */
async function tokenEndpoints(app: FastifyInstance, { config, clients, privateKey }: TokenEndpointsOptions) {
  const limit = tokenAttemptLimiter(app, config, app.sharedCounters);
  const deps = { clients, privateKey, issuer: config.JWT_ISSUER, limit };
  registerTokenRoute(app, deps);
  await registerRoadsideRoutes(app, deps);
}

/** Register on the root instance: the roadside endpoint's multipart parsing serves the routes registered after it. */
export const tokenEndpointsPlugin = fp(tokenEndpoints, { name: 'token-endpoints', dependencies: ['rate-limit'] });
