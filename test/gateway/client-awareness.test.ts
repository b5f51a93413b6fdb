/**
 * Apollo Client's client awareness: `apollographql-client-name` / `-version` become the `client_name`
 * label of gateway_graphql_operations_total (read with a Prometheus parser), bounded to 20 names per
 * deployment (shared in Redis by every process), malformed and later names counted as `(other)`.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientNames, MAX_CLIENT_NAMES } from '../../gateway/observability/client-names.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

let t: TestStack;
beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring'] }); });
afterAll(async () => { await t?.close(); });

/** client_name -> count of GraphQL operations over /graphql. */
async function byClientName(): Promise<Map<string, number>> {
  const family = parsePrometheusTextFormat(await (await fetch(`${t.url}/metrics`)).text()).find((f) => f.name === 'gateway_graphql_operations_total');
  const counts = new Map<string, number>();
  for (const m of family?.metrics ?? []) {
    if (m.labels?.transport !== 'graphql') continue;
    counts.set(m.labels.client_name!, (counts.get(m.labels.client_name!) ?? 0) + Number(m.value));
  }
  return counts;
}

const asApp = (name: string | undefined) => fetch(`${t.url}/graphql`, {
  method: 'POST', body: JSON.stringify({ query: '{ __typename }' }),
  headers: { 'content-type': 'application/json', authorization: `Bearer ${t.token}`, ...(name === undefined ? {} : { 'apollographql-client-name': name, 'apollographql-client-version': '1.0.0' }) },
});

describe('the client_name label', () => {
  it('names the first 20 apps, counts malformed and later names as (other), and requests naming none as (none)', async () => {
    const names = Array.from({ length: MAX_CLIENT_NAMES + 5 }, (_, i) => `fleet-web.v${i}`);
    for (const name of names) expect((await asApp(name)).status).toBe(200);
    for (const malformed of ['has space', 'x'.repeat(65), 'naïve', '{evil="1"}']) expect((await asApp(malformed)).status).toBe(200);
    expect((await asApp(undefined)).status).toBe(200);
    expect((await asApp(names[0])).status).toBe(200);
    const counts = await byClientName();
    for (const name of names.slice(0, MAX_CLIENT_NAMES)) expect(counts.get(name), name).toBe(name === names[0] ? 2 : 1);
    expect(counts.get('(other)')).toBe(5 + 4);
    expect(counts.get('(none)')).toBeGreaterThanOrEqual(1);
    expect([...counts.keys()].filter((k) => !names.includes(k)).sort()).toEqual(['(none)', '(other)']);
  });
});

describe('ClientNames shared in Redis', () => {
  let redis: Redis;
  const key = `test:client-names:${process.pid}:${Date.now()}`;
  beforeAll(() => { redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 }); });
  afterAll(async () => { await redis.del(key); await redis.quit(); });

  it('bounds the names of every process together: what one admitted the other labels, past 20 both say (other)', async () => {
    const [a, b] = [new ClientNames(), new ClientNames()];
    a.share(redis, key);
    b.share(redis, key);
    const names = Array.from({ length: MAX_CLIENT_NAMES }, (_, i) => `app-${i}`);
    for (const [i, name] of names.entries()) expect(await (i % 2 ? a : b).label(name)).toBe(name);
    expect(await a.label('app-late')).toBe('(other)');
    expect(await b.label('app-late-2')).toBe('(other)');
    // Names the other process admitted keep their label here, full as the set is.
    for (const name of names) {
      expect(await a.label(name)).toBe(name);
      expect(await b.label(name)).toBe(name);
    }
    expect(await redis.scard(key)).toBe(MAX_CLIENT_NAMES);
  });
});
