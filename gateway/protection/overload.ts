import underPressure from '@fastify/under-pressure';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../../subgraphs/platform/config.ts';
import { ServiceUnavailable } from './unavailable.ts';

/** Answered even under pressure: liveness, and the metrics that show the pressure. */
export const OVERLOAD_EXEMPT_PATHS = new Set(['/healthz', '/metrics']);

const reasons: Record<string, string> = {
  eventLoopDelay: 'event-loop delay', heapUsedBytes: 'heap in use', rssBytes: 'resident memory', eventLoopUtilization: 'event-loop utilisation',
};

/**
 * Load shedding for the whole process (@fastify/under-pressure): every OVERLOAD_SAMPLE_INTERVAL_MS
 * the mean event-loop delay (and, when set, the heap in use) is sampled; while a sample is past its
 * threshold every request except OVERLOAD_EXEMPT_PATHS answers 503 problem+json with Retry-After
 * before any work is done.
 */
async function overloadProtection(app: FastifyInstance, { config }: { config: Config }) {
  const retryAfter = config.OVERLOAD_RETRY_AFTER_SECONDS;
  await app.register(underPressure, {
    maxEventLoopDelay: config.OVERLOAD_MAX_EVENT_LOOP_DELAY_MS,
    maxHeapUsedBytes: config.OVERLOAD_MAX_HEAP_USED_MB * 1024 * 1024,
    sampleInterval: config.OVERLOAD_SAMPLE_INTERVAL_MS,
    retryAfter,
    // A rejected promise goes to the error handler (problem+json); a resolved one lets the request through.
    pressureHandler: async (request: FastifyRequest, _reply, type, value) => {
      if (OVERLOAD_EXEMPT_PATHS.has(request.routeOptions.url ?? '')) return;
      request.log.warn({ overload: { type, value } }, 'request shed under load');
      throw new ServiceUnavailable(`The service is overloaded (${reasons[type] ?? type} over its limit); retry in ${retryAfter} s`, retryAfter);
    },
  });
}

/** Register on the root instance, before the routes: `await app.register(overloadPlugin, { config })`. */
export const overloadPlugin = fp(overloadProtection, { name: 'overload' });
