import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** A client's executions are counted in windows of a tenth of a minute, each holding a tenth of its budget. */
const WINDOWS_PER_MINUTE = 10;

/**
 * SUBSCRIPTIONS_EXECUTIONS_PER_MINUTE: the queries one client's subscriptions may run (a shared
 * execution counts once), in Redis with REDIS_URL so that every gateway process counts against one
 * budget, as the request rate limit does. A Redis outage counts in the process meanwhile (the
 * limiter's insurance), never unbounded.
 */
export interface ExecutionBudget {
  /** Charges one execution to `clientKey` (callerKey): 0 when charged, else the milliseconds until one may be. */
  charge(clientKey: string): Promise<number>;
}

/** The window and its executions: 6 s holding a tenth of the minute's, or under 10 a minute one per window of 60/perMinute s. */
export function budgetWindow(perMinute: number) {
  const points = Math.floor(perMinute / WINDOWS_PER_MINUTE);
  return points >= 1 ? { points, duration: 60 / WINDOWS_PER_MINUTE } : { points: 1, duration: Math.ceil(60 / perMinute) };
}

export function executionBudget(perMinute: number, shared?: { redis: Redis; keyPrefix: string }): ExecutionBudget {
  const window = budgetWindow(perMinute);
  const memory = new RateLimiterMemory({ keyPrefix: 'subscription-executions', ...window });
  const limiter = shared
    ? new RateLimiterRedis({ storeClient: shared.redis, keyPrefix: `${shared.keyPrefix}limit:subscription-executions`, insuranceLimiter: memory, ...window })
    : memory;
  return {
    charge: (clientKey) => limiter.consume(clientKey).then(() => 0, (error: unknown) => {
      if (error instanceof RateLimiterRes) return Math.max(1, error.msBeforeNext);
      throw error;
    }),
  };
}
