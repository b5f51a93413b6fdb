import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Config } from '../subgraphs/platform/config.ts';
import { TokenError, type AttemptLimiter } from './auth/token-route.ts';
import { problem, sendProblem } from './rest/problem.ts';

/** Seconds a caller is asked to wait while the shared counters (Redis) cannot be reached. */
const COUNTERS_DOWN_RETRY_SECONDS = 5;
const countersDown = 'the shared rate-limit counters (Redis) are unavailable; retry shortly';

/** The verified caller's client id (set by the token gate), else the address, keys the rate limit. */
const callerKey = (request: FastifyRequest) => {
  const caller = (request as FastifyRequest & { caller?: { clientId: string } | null }).caller;
  return caller ? `client:${caller.clientId}` : `ip:${request.ip}`;
};

/**
 * Registers the rate-limit plugin on the gateway; limits are attached where they apply. With
 * REDIS_URL the counters live in Redis, so every gateway process counts against one limit;
 * without it each process counts on its own.
 */
export async function registerRateLimitPlugin(app: FastifyInstance, config: Config) {
  if (!config.REDIS_URL) return app.register(rateLimit, { global: false });
  // Loaded only here: most starts have no Redis, and the client's modules cost ~50 ms to load.
  const { Redis } = await import('ioredis');
  // Bounded waits: a Redis outage fails requests in seconds instead of queueing them.
  const redis = new Redis(config.REDIS_URL, { connectTimeout: 2_000, maxRetriesPerRequest: 1, commandTimeout: 2_000 });
  redis.on('error', (error: Error) => app.log.warn({ err: { type: error.name, message: error.message } }, 'redis'));
  app.addHook('onClose', async () => { await redis.quit().catch(() => redis.disconnect()); });
  return app.register(rateLimit, { global: false, redis, nameSpace: `${config.REDIS_KEY_PREFIX}limit:` });
}

/** Per-client request rate limit on GraphQL and REST (runs after the token gate), answering 429 with Retry-After. */
export function addRequestRateLimit(scope: FastifyInstance, app: FastifyInstance, config: Config) {
  const limit = app.rateLimit({
    max: config.RATE_LIMIT_PER_MINUTE,
    timeWindow: 60_000,
    keyGenerator: (request) => `request:${callerKey(request)}`,
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      code: 'RATE_LIMITED',
      message: `Rate limit of ${context.max} requests per minute exceeded; retry in ${Math.ceil(context.ttl / 1000)} s`,
    }),
  });
  // A Redis outage answers 503 with Retry-After, never a 500 and never an unlimited pass.
  scope.addHook('preHandler', async (request, reply) => {
    try {
      await limit.call(scope, request, reply);
    } catch (error) {
      if (typeof (error as { statusCode?: unknown }).statusCode === 'number') throw error; // 429: over the limit
      request.log.warn({ err: { type: (error as Error).name, message: (error as Error).message } }, 'rate limit counters unavailable');
      reply.header('retry-after', String(COUNTERS_DOWN_RETRY_SECONDS));
      return sendProblem(reply, problem(503, 'SERVICE_UNAVAILABLE', countersDown));
    }
  });
}

/**
 * Slows token brute force: at most TOKEN_RATE_LIMIT_PER_MINUTE attempts per address and per client id.
 * Needs @fastify/rate-limit registered on `app` (the gateway does so with `global: false`).
 */
export function tokenAttemptLimiter(app: FastifyInstance, config: Config): AttemptLimiter {
  type Attempt = FastifyRequest & { key: string };
  const options = { max: config.TOKEN_RATE_LIMIT_PER_MINUTE, timeWindow: 60_000, keyGenerator: (r: FastifyRequest) => (r as Attempt).key };
  const byAddress = app.createRateLimit(options);
  const byClient = app.createRateLimit(options);
  // The limiter reads only the key and the route's rate-limit group from the request it is given.
  const attempt = (key: string) => ({ key, routeOptions: { config: {} } }) as unknown as Attempt;
  return async (ip, clientId) => {
    const results = await Promise.all([byAddress(attempt(`token:ip:${ip}`)), ...(clientId ? [byClient(attempt(`token:client:${clientId}`))] : [])])
      .catch(() => { throw new TokenError('temporarily_unavailable', countersDown, 503, COUNTERS_DOWN_RETRY_SECONDS); });
    const waits = results.flatMap((r) => ('isExceeded' in r && r.isExceeded ? [r.ttlInSeconds] : []));
    return waits.length ? Math.max(1, ...waits) : null;
  };
}
