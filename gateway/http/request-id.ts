import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { REQUEST_ID_HEADER } from '../../subgraphs/platform/log.ts';

/** Every answer names its request (the id in the logs), taken from the caller's header when valid. */
export const requestIdPlugin = fp(async (app: FastifyInstance) => {
  app.addHook('onSend', async (request, reply) => { reply.header(REQUEST_ID_HEADER, request.id); });
}, { name: 'request-id' });
