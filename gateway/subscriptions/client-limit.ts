import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';
import { AppError } from '../../subgraphs/platform/errors.ts';

/**
 * SUBSCRIPTIONS_MAX_PER_CLIENT (a client's active subscriptions) or SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT
 * (its open WebSockets), counted where the rate limits are.
 */
export interface ClientLimit {
  /** Takes one of the client's places for `id` (a subscription's, a connection's); false when it has none left. */
  acquire(clientId: string, id: string): Promise<boolean>;
  release(clientId: string, id: string): void;
  close(): void;
}

/** Without REDIS_URL each process counts on its own, as the request rate limit does. */
export function memoryClientLimit(max: number): ClientLimit {
  const held = new Map<string, Set<string>>();
  return {
    async acquire(clientId, id) {
      const ids = held.get(clientId) ?? new Set<string>();
      if (ids.size >= max) return false;
      held.set(clientId, ids.add(id));
      return true;
    },
    release(clientId, id) {
      const ids = held.get(clientId);
      if (ids?.delete(id) && !ids.size) held.delete(clientId);
    },
    close() { held.clear(); },
  };
}

/** A place is leased for this long and renewed by its process: a process that dies gives its places back when the lease ends. */
const LEASE_MS = 60_000;
const RENEW_EVERY_MS = 20_000;

/** Drops expired leases, then adds this one if the client has fewer than the limit; atomic in Redis. */
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1] + ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

/**
 * With REDIS_URL every gateway process counts against one limit: one sorted set per client of leased
 * places (member: the subscription's id, score: when its lease ends). A Redis outage refuses new
 * subscriptions (SERVICE_UNAVAILABLE), never lets them through unbounded.
 */
export function redisClientLimit(
  redis: Redis, prefix: string, max: number, log: FastifyBaseLogger,
  counted: 'subscriptions' | 'connections' = 'subscriptions',
): ClientLimit {
  const key = (clientId: string) => `${prefix}${counted}:${clientId}`;
  const held = new Map<string, Set<string>>();
  const renew = setInterval(() => {
    if (!held.size) return;
    const until = Date.now() + LEASE_MS;
    const batch = redis.pipeline();
    for (const [clientId, ids] of held) {
      for (const id of ids) batch.zadd(key(clientId), 'XX', until, id);
      batch.pexpire(key(clientId), LEASE_MS);
    }
    batch.exec().catch((error: Error) => log.warn({ err: { type: error.name, message: error.message } }, 'could not renew subscription leases'));
  }, RENEW_EVERY_MS);
  renew.unref();
  return {
    async acquire(clientId, id) {
      const taken = await redis.eval(ACQUIRE, 1, key(clientId), Date.now(), max, LEASE_MS, id).catch(() => {
        throw new AppError('SERVICE_UNAVAILABLE', 'The shared subscription counters (Redis) are unavailable; retry shortly');
      });
      if (taken !== 1) return false;
      held.set(clientId, (held.get(clientId) ?? new Set<string>()).add(id));
      return true;
    },
    release(clientId, id) {
      const ids = held.get(clientId);
      if (ids?.delete(id) && !ids.size) held.delete(clientId);
      redis.zrem(key(clientId), id).catch((error: Error) => log.warn({ err: { type: error.name, message: error.message } }, 'could not release a subscription lease'));
    },
    close() { clearInterval(renew); },
  };
}
