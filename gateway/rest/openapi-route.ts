import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { RestRoute } from '../../subgraphs/platform/rest/types.ts';
import { buildOpenApi } from './openapi.ts';

/** `GET /openapi.json`: the document of the REST paths, built once. */
export const openApiRoutePlugin = fp(async (app: FastifyInstance, { routes }: { routes: readonly RestRoute[] }) => {
  const openapi = buildOpenApi(routes);
  app.get('/openapi.json', async () => openapi);
}, { name: 'openapi-route' });
