import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { requestStarted } from '../../subgraphs/platform/lanes.ts';
import { SSE_PATH } from '../subscriptions/sse.ts';

/**
 * Every request counts as in flight (subgraphs/platform/lanes.ts) from its arrival until its answer
 * is handed over (onSend: a stream's first part) or its connection closes, except the subscription
 * transports that stay open (WebSocket upgrades, SSE streams): while one is, subscription
 * executions take their turns between requests rather than between a request's own turns.
 */
async function foreground(app: FastifyInstance) {
  const ends = new WeakMap<object, () => void>();
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers.upgrade !== undefined || request.routeOptions.url === SSE_PATH) return;
    const ended = requestStarted();
    ends.set(request, ended);
    reply.raw.once('close', ended);
  });
  app.addHook('onSend', async (request) => { ends.get(request)?.(); });
}

/** Register on the root instance, before the routes. */
export const foregroundPlugin = fp(foreground, { name: 'foreground' });
