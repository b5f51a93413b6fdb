import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Redis } from 'ioredis';
import ipaddr from 'ipaddr.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { callerKey as principal } from '../../subgraphs/platform/auth/caller-key.ts';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import type { Config } from '../../subgraphs/platform/config.ts';
import { TokenError, type AttemptLimiter } from '../auth/token-route.ts';
import { problem, sendProblem } from '../../subgraphs/platform/rest/problem.ts';
import { perMinute, setLimitFields, stateOf, type LimitState, type QuotaPolicy } from './ratelimit-fields.ts';

/** Seconds a caller is asked to wait while the shared counters (Redis) cannot be reached. */
const COUNTERS_DOWN_RETRY_SECONDS = 5;
const countersDown = 'the shared rate-limit counters (Redis) are unavailable; retry shortly';

const callerOf = (request: FastifyRequest) => (request as FastifyRequest & { caller?: Caller | null }).caller;

/**
 * The verified caller (set by the token gate: a client, or one user of an issuer registration),
 * else its address (an IPv6 /64, as for token attempts), keys the rate limit: a WebSocket upgrade,
 * whose token comes later, is counted so.
 */
const callerKey = (request: FastifyRequest) => {
  const caller = callerOf(request);
  return caller ? `client:${principal(caller)}` : `ip:${attemptAddress(request.ip)}`;
};

/** The limit over every user of one issuer registration: ISSUER_RATE_LIMIT_PER_MINUTE, by default 20 users' worth. */
export const issuerRequestLimit = (config: Config) => config.ISSUER_RATE_LIMIT_PER_MINUTE ?? 20 * config.RATE_LIMIT_PER_MINUTE;

/**
 * Registers the rate-limit plugin on the gateway with the per-client request limit; routes opt in
 * with addRequestRateLimit. With REDIS_URL the counters live in Redis, so every gateway process
 * counts against one limit; without it each process counts on its own. Returns the Redis client,
 * for the token-attempt and subscription counters.
 */
async function registerRateLimit(app: FastifyInstance, config: Config): Promise<Redis | undefined> {
  // The limit's options go here, not to app.rateLimit(options): a limiter made with options keys
  // its counters by a route it does not have (`limit:undefinedundefined-request:...` in Redis).
  const requestLimit = {
    global: false,
    max: config.RATE_LIMIT_PER_MINUTE,
    timeWindow: 60_000,
    keyGenerator: callerKey,
    errorResponseBuilder: (_request: FastifyRequest, context: { max: number; ttl: number }) => ({
      statusCode: 429,
      code: 'RATE_LIMITED',
      message: `Rate limit of ${context.max} requests per minute exceeded; retry in ${Math.ceil(context.ttl / 1000)} s`,
    }),
  };
  if (!config.REDIS_URL) {
    await app.register(rateLimit, requestLimit);
    return undefined;
  }
  // Loaded only here: most starts have no Redis, and the client's modules cost ~50 ms to load.
  const { Redis } = await import('ioredis');
  // Bounded waits: a Redis outage fails requests in seconds instead of queueing them.
  const redis = new Redis(config.REDIS_URL, { connectTimeout: 2_000, maxRetriesPerRequest: 1, commandTimeout: 2_000 });
  redis.on('error', (error: Error) => app.log.warn({ err: { type: error.name, message: error.message } }, 'redis'));
  app.addHook('onClose', async () => { await redis.quit().catch(() => redis.disconnect()); });
  await app.register(rateLimit, { ...requestLimit, redis, nameSpace: `${config.REDIS_KEY_PREFIX}limit:request:` });
  return redis;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The Redis client of the shared counters (REDIS_URL), set by rateLimitPlugin; undefined without Redis. */
    sharedCounters: Redis | undefined;
  }
}

/** Register on the root instance: `await app.register(rateLimitPlugin, { config })`; decorates it with sharedCounters. */
export const rateLimitPlugin = fp(async (app: FastifyInstance, { config }: { config: Config }) => {
  app.decorate('sharedCounters', await registerRateLimit(app, config));
}, { name: 'rate-limit' });

/**
 * Per-client (per-user, for an end user's token) request rate limit on GraphQL and REST, and the
 * limit of each issuer registration over all its users; runs after the token gate and answers 429
 * with Retry-After. Every answer it counted says so in the RateLimit fields (policies `client`, and
 * `issuer` for an end user's token: gateway/protection/ratelimit-fields.ts).
 */
export function addRequestRateLimit(scope: FastifyInstance, config: Config) {
  const limit = scope.rateLimit();
  const redis = scope.sharedCounters;
  const points = issuerRequestLimit(config);
  const byIssuer = redis
    ? new RateLimiterRedis({ storeClient: redis, keyPrefix: `${config.REDIS_KEY_PREFIX}limit:issuer`, points, duration: 60 })
    : new RateLimiterMemory({ keyPrefix: 'issuer', points, duration: 60 });
  const issuerPolicy = perMinute('issuer', points);
  const issuerStates = new WeakMap<FastifyRequest, LimitState>();
  const issuerLimit = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = callerOf(request);
    if (caller?.userId === undefined) return;
    const over = await byIssuer.consume(caller.clientId).then((counted) => {
      issuerStates.set(request, stateOf(issuerPolicy, counted.remainingPoints, counted.msBeforeNext));
      return null;
    }, (error: unknown) => {
      if (!(error instanceof RateLimiterRes)) throw error;
      issuerStates.set(request, stateOf(issuerPolicy, 0, error.msBeforeNext));
      return Math.max(1, Math.ceil(error.msBeforeNext / 1000));
    });
    if (over === null) return;
    reply.header('retry-after', String(over));
    throw Object.assign(new Error(`Rate limit of ${points} requests per minute over every user of issuer registration ${caller.clientId} exceeded; retry in ${over} s`), { statusCode: 429, code: 'RATE_LIMITED' });
  };
  // A Redis outage answers 503 with Retry-After, never a 500 and never an unlimited pass.
  scope.addHook('preHandler', async (request, reply) => {
    try {
      await limit.call(scope, request, reply);
      if (!reply.sent) await issuerLimit(request, reply);
    } catch (error) {
      if (typeof (error as { statusCode?: unknown }).statusCode === 'number') throw error; // 429: over the limit
      request.log.warn({ err: { type: (error as Error).name, message: (error as Error).message } }, 'rate limit counters unavailable');
      reply.header('retry-after', String(COUNTERS_DOWN_RETRY_SECONDS));
      return sendProblem(reply, problem(503, 'SERVICE_UNAVAILABLE', countersDown));
    }
  });
  // The RateLimit fields of every counted answer (429s included), from the counters'
  // X-RateLimit-* headers (which stay, for the clients that read them) and the issuer's state.
  const clientPolicy = perMinute('client', config.RATE_LIMIT_PER_MINUTE);
  scope.addHook('onSend', async (request, reply) => {
    const remaining = reply.getHeader('x-ratelimit-remaining');
    // Not counted: refused before the limit (401, 413, ...), or the counters are down.
    if (remaining === undefined) return;
    const resetMs = Number(reply.getHeader('x-ratelimit-reset')) * 1000;
    const client = stateOf(clientPolicy, Number(remaining), resetMs);
    const issuer = issuerStates.get(request);
    setLimitFields(reply, issuer ? [client, issuer] : [client]);
  });
}

/**
 * Whose failures an address's are: an IPv4 address (IPv4-mapped IPv6 included) on its own, an IPv6
 * address with its /64, the block one host or subscriber usually holds whole.
 */
export function attemptAddress(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/64`).toString()}/64`;
}

/**
 * Failed token attempts, counted per address (TOKEN_ADDRESS_RATE_LIMIT_PER_MINUTE, over every client
 * id) and per client id from one address (TOKEN_RATE_LIMIT_PER_MINUTE), in fixed one-minute windows
 * (in Redis with REDIS_URL). An attempt is counted before its secret is checked, so that a burst
 * from one address hashes no more secrets than its limit, and given back when the secret was right:
 * only failures stay counted, and only against the address they came from. The token answers' RateLimit
 * fields name the two as policies `token-address` and `token-client`.
 */
export function tokenAttemptLimiter(app: FastifyInstance, config: Config, redis: Redis | undefined): AttemptLimiter {
  const counter = (policy: QuotaPolicy) => {
    const options = { points: policy.quota, duration: policy.windowSeconds };
    const limiter = redis
      ? new RateLimiterRedis({ ...options, storeClient: redis, keyPrefix: config.REDIS_KEY_PREFIX + policy.name })
      : new RateLimiterMemory({ ...options, keyPrefix: policy.name });
    return { policy, limiter };
  };
  const byAddress = counter(perMinute('token-address', config.TOKEN_ADDRESS_RATE_LIMIT_PER_MINUTE));
  const byClient = counter(perMinute('token-client', config.TOKEN_RATE_LIMIT_PER_MINUTE));
  // A client id is as long as the caller makes it: its digest keeps the counter's key bounded.
  const clientKey = (address: string, clientId: string) => `${address} ${createHash('sha256').update(clientId).digest('base64url')}`;
  /** Counts one attempt: where it leaves the caller, and the seconds to wait when over the quota. */
  const count = ({ policy, limiter }: ReturnType<typeof counter>, key: string) => limiter.consume(key).then(
    (counted) => ({ state: stateOf(policy, counted.remainingPoints, counted.msBeforeNext), wait: null }),
    (error: unknown) => {
      if (!(error instanceof RateLimiterRes)) {
        throw new TokenError('temporarily_unavailable', countersDown, 503, COUNTERS_DOWN_RETRY_SECONDS);
      }
      const wait = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
      return { state: stateOf(policy, 0, error.msBeforeNext), wait };
    },
  );
  return {
    async begin(ip, clientId) {
      const address = attemptAddress(ip);
      // The address first: an address over its limit adds no per-client keys.
      const overAddress = await count(byAddress, address);
      if (overAddress.wait || !clientId) return { wait: overAddress.wait, states: [overAddress.state] };
      const overClient = await count(byClient, clientKey(address, clientId));
      return { wait: overClient.wait, states: [overAddress.state, overClient.state] };
    },
    async succeeded(ip, clientId) {
      const address = attemptAddress(ip);
      const given = [[byAddress, address], [byClient, clientKey(address, clientId)]] as const;
      return Promise.all(given.map(async ([{ policy, limiter }, key]) => {
        const after = await limiter.reward(key);
        return stateOf(policy, after.remainingPoints, after.msBeforeNext);
      })).catch((error: Error) => {
        // The token is issued all the same; the attempt stays counted until its window ends.
        app.log.warn({ err: { type: error.name, message: error.message } }, 'could not uncount a successful token attempt');
        return [];
      });
    },
  };
}
