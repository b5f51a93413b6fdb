import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildStack, type Stack } from '../../gateway/stack.ts';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { DEFAULT_CLIENT, TEST_HOP_KEY } from '../support/stack.ts';

let stack: Stack;
let base: string;
let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'frg-redis-down-'));
  // Shared counters configured, and nothing answers there.
  const env = {
    NODE_ENV: 'test', LOG_LEVEL: 'silent', DATA_DIR: dataDir, PGLITE_IN_MEMORY: 'true', INTERNAL_HOP_KEY: TEST_HOP_KEY, REDIS_URL: 'redis://127.0.0.1:9',
    // Load shedding off: its 503 (a busy machine) is not the one this test is about.
    OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
    BOOTSTRAP_CLIENT_ID: DEFAULT_CLIENT.id, BOOTSTRAP_CLIENT_SECRET: DEFAULT_CLIENT.secret,
    BOOKING_URL: 'http://127.0.0.1:9/graphql', ROADSIDE_URL: 'http://127.0.0.1:9/graphql', REGISTRATION_URL: 'http://127.0.0.1:9/graphql', RISK_URL: 'http://127.0.0.1:9/graphql',
  };
  stack = await buildStack(loadConfig(env), env);
  base = await stack.gateway.app.listen({ host: '127.0.0.1', port: 0 });
}, 240_000);
afterAll(async () => {
  await stack?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('rate-limit counters in Redis, unreachable', () => {
  it('answer 503 with Retry-After instead of counting nothing or failing with 500', async () => {
    const api = await fetch(`${base}/shared-mobility-insights/v2/users/x`);
    expect(api.status).toBe(503);
    expect(api.headers.get('content-type')).toMatch(/problem\+json/);
    expect(api.headers.get('retry-after')).toBe('5');
    expect(((await api.json()) as { code: string }).code).toBe('SERVICE_UNAVAILABLE');

    const token = await fetch(`${base}/platform/oauth/v1/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id, client_secret: DEFAULT_CLIENT.secret }).toString(),
    });
    expect(token.status).toBe(503);
    expect(token.headers.get('retry-after')).toBe('5');
    expect(((await token.json()) as { error: string }).error).toBe('temporarily_unavailable');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});
