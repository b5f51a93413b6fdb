import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildStack, type Stack } from '../../gateway/stack.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { loadConfig, subgraphUrlVariable } from '../../subgraphs/platform/config.ts';
import { testDatabase } from '../support/database.ts';
import { TEST_HOP_KEY } from '../support/stack.ts';

/**
 * Load shedding. The gateway runs in this process, so the test can stall the event loop itself.
 * Requests are `{ __typename }` without a token: 200 without pressure, 503 when shed.
 */
let opened: { stack: Stack; url: string; close(): Promise<void> } | undefined;
afterEach(async () => { await opened?.close(); opened = undefined; });

async function boot(env: Record<string, string>) {
  const dataDir = await mkdtemp(join(tmpdir(), 'frg-overload-'));
  const database = await testDatabase();
  // Only scoring runs; the others stand at an unreachable address (nothing here calls them).
  const unreachable = Object.fromEntries(Object.keys(subgraphDefinitions).filter((n) => n !== 'scoring').map((n) => [subgraphUrlVariable(n), 'http://127.0.0.1:9/graphql']));
  const all = { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'error', DATA_DIR: dataDir, DATABASE_URL: undefined, INTERNAL_HOP_KEY: TEST_HOP_KEY, ...database.env, ...unreachable, ...env };
  const stack = await buildStack(loadConfig(all), all);
  const url = await stack.gateway.app.listen({ host: '127.0.0.1', port: 0 });
  opened = {
    stack, url,
    async close() { await stack.close(); await database.drop(); await rm(dataDir, { recursive: true, force: true }); },
  };
  return opened;
}

const graphql = (url: string) => fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
const busy = (ms: number) => { const end = performance.now() + ms; while (performance.now() < end) { /* stall the event loop */ } };

async function waitForStatus(url: string, status: number) {
  for (let i = 0; i < 100; i++) {
    if ((await graphql(url)).status === status) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`never answered ${status}: ${JSON.stringify(opened?.stack.gateway.app.memoryUsage())}`);
}

describe('overload protection', () => {
  it('sheds every request but /healthz and /metrics with 503 problem+json and Retry-After while a threshold is passed', async () => {
    // A heap threshold of 1 MB is always passed: the process is permanently "under pressure".
    const { url } = await boot({ OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0', OVERLOAD_MAX_HEAP_USED_MB: '1', OVERLOAD_SAMPLE_INTERVAL_MS: '10', OVERLOAD_RETRY_AFTER_SECONDS: '7' });
    await new Promise((r) => setTimeout(r, 50));
    const shed = [
      await graphql(url),
      await fetch(`${url}/shared-mobility-insights/v2/users/nobody`),
      await fetch(`${url}/platform/oauth/v1/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=client_credentials&client_id=a&client_secret=b' }),
      await fetch(`${url}/readyz`),
    ];
    for (const res of shed) {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('7');
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const body = await res.json() as { code: string; detail: string };
      expect(body.code).toBe('SERVICE_UNAVAILABLE');
      expect(body.detail).toMatch(/overloaded \(heap in use/);
    }
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    // By routed path: an encoded or slash-ended probe is the probe.
    for (const path of ['/%68ealthz', '/healthz/']) expect((await fetch(`${url}${path}`)).status, path).toBe(200);
    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    // The shed requests are counted like any other.
    expect(await metrics.text()).toMatch(/gateway_http_requests_total\{method="POST",route="\/graphql",status_code="503"\} 1/);
  }, 180_000);

  it('sheds while the event loop lags past OVERLOAD_MAX_EVENT_LOOP_DELAY_MS and recovers once it does not', async () => {
    const { url } = await boot({ OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '40', OVERLOAD_SAMPLE_INTERVAL_MS: '100', OVERLOAD_RETRY_AFTER_SECONDS: '3' });
    await waitForStatus(url, 200);

    // Stall the loop for 190 ms out of every 200 ms, as one expensive request after another would.
    // (With longer idle gaps the many short delays sampled in them pull the mean under the threshold.)
    const stall = setInterval(() => busy(190), 200);
    const statuses: number[] = [];
    const health: number[] = [];
    let retryAfter: string | null = null;
    const until = Date.now() + 2_000;
    try {
      while (Date.now() < until) {
        const res = await graphql(url);
        statuses.push(res.status);
        if (res.status === 503) {
          retryAfter = res.headers.get('retry-after');
          expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
        }
        health.push((await fetch(`${url}/healthz`)).status);
      }
    } finally {
      clearInterval(stall);
    }
    expect(statuses).toContain(503);
    expect(retryAfter).toBe('3');
    expect(statuses.every((s) => s === 503 || s === 200), statuses.join(',')).toBe(true);
    expect(health.every((s) => s === 200), health.join(',')).toBe(true);
    // Once the loop is idle again, the next samples are under the threshold and requests go through.
    await waitForStatus(url, 200);
  }, 180_000);

  it('is on by default with a 200 ms event-loop delay threshold, and can be turned off', () => {
    const defaults = loadConfig({});
    expect(defaults.OVERLOAD_MAX_EVENT_LOOP_DELAY_MS).toBe(200);
    expect(defaults.OVERLOAD_MAX_HEAP_USED_MB).toBe(0);
    expect(defaults.OVERLOAD_RETRY_AFTER_SECONDS).toBe(5);
    expect(loadConfig({ OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' }).OVERLOAD_MAX_EVENT_LOOP_DELAY_MS).toBe(0);
    expect(() => loadConfig({ OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '-1' })).toThrow(/OVERLOAD_MAX_EVENT_LOOP_DELAY_MS/);
  });
});
