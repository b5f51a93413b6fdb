/**
 * The request rate limit's counters in Redis, as an operator reading Redis sees them: one key per
 * caller under REDIS_KEY_PREFIX, named for what it counts (it was `frg:limit:undefinedundefined-request:...`).
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `frg-test-${randomBytes(6).toString('hex')}:`;
const LIMIT = 5;

let t: TestStack;
let redis: Redis;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['scoring'], env: { REDIS_URL, REDIS_KEY_PREFIX: PREFIX, RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  if (redis) {
    const keys = await redis.keys(`${PREFIX}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  }
  await t?.close();
});

describe('request rate-limit counters in Redis', () => {
  it('are one key per client, <prefix>limit:request:client:<id>, counting its requests for a minute', async () => {
    const other = await t.clientFor('org-keys');
    for (let i = 0; i < 3; i++) await t.request('GET', '/shared-mobility-insights/v2/users/nobody', { token: t.token });
    await t.graphql('{ __typename }', undefined, other.token);

    const keys = (await redis.keys(`${PREFIX}limit:*`)).sort();
    expect(keys).toEqual([`${PREFIX}limit:request:client:${DEFAULT_CLIENT.id}`, `${PREFIX}limit:request:client:${other.clientId}`].sort());
    expect(await redis.get(`${PREFIX}limit:request:client:${DEFAULT_CLIENT.id}`)).toBe('3');
    expect(await redis.get(`${PREFIX}limit:request:client:${other.clientId}`)).toBe('1');
    const ttl = await redis.pttl(`${PREFIX}limit:request:client:${DEFAULT_CLIENT.id}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('still limit: past RATE_LIMIT_PER_MINUTE the client gets 429 with the configured message', async () => {
    let res;
    for (let i = 0; i < LIMIT; i++) res = await t.request('GET', '/shared-mobility-insights/v2/users/nobody', { token: t.token });
    expect(res!.status).toBe(429);
    expect(res!.body.code).toBe('RATE_LIMITED');
    expect(res!.body.detail ?? res!.body.message).toContain(`Rate limit of ${LIMIT} requests per minute exceeded`);
    expect(await redis.get(`${PREFIX}limit:request:client:${DEFAULT_CLIENT.id}`)).toBe(String(3 + LIMIT));
  });
});
