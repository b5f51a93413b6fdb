import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryClientLimit, redisClientLimit } from '../../../gateway/subscriptions/client-limit.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const quiet = { warn() {} } as never;
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
afterAll(async () => { await redis.quit(); });

describe('SUBSCRIPTIONS_MAX_PER_CLIENT', () => {
  it('is counted per process without Redis', async () => {
    const limit = memoryClientLimit(2);
    expect([await limit.acquire('c', '1'), await limit.acquire('c', '2'), await limit.acquire('c', '3'), await limit.acquire('d', '4')]).toEqual([true, true, false, true]);
    limit.release('c', '1');
    expect(await limit.acquire('c', '3')).toBe(true);
  });

  it('is counted over every process in Redis: places taken in one are missing in the other, and come back when released', async () => {
    const prefix = `frg-test-${randomUUID()}:`;
    const one = redisClientLimit(redis, prefix, 2, quiet);
    const two = redisClientLimit(redis, prefix, 2, quiet);
    expect(await one.acquire('c', 'a')).toBe(true);
    expect(await two.acquire('c', 'b')).toBe(true);
    expect(await one.acquire('c', 'c')).toBe(false);
    expect(await two.acquire('other', 'd')).toBe(true);
    two.release('c', 'b');
    await redis.ping();
    expect(await one.acquire('c', 'c')).toBe(true);
    one.close();
    two.close();
    await redis.del(`${prefix}subscriptions:c`, `${prefix}subscriptions:other`);
  });

  it('refuses new subscriptions while Redis is down (SERVICE_UNAVAILABLE), never lets them through', async () => {
    const down = new Redis('redis://127.0.0.1:9', { maxRetriesPerRequest: 0, retryStrategy: () => null, lazyConnect: true });
    down.on('error', () => undefined);
    const limit = redisClientLimit(down, 'test:', 2, quiet);
    await expect(limit.acquire('c', 'a')).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    limit.close();
    down.disconnect();
  });
});
