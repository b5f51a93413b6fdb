import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';
import { REVOCATION_CACHE_MS } from '../../gateway/auth/revocation.ts';

/**
 * The database goes away and comes back: requests answer 503 quickly while it is down and succeed
 * again without a restart. PostgreSQL is reached through a proxy the test can cut; the machine's
 * PostgreSQL (DATABASE_URL, or the local default) hosts a database made for this test.
 */
const base = new URL(process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test');
const name = `fault_${Date.now().toString(36)}`;
let proxy: Awaited<ReturnType<typeof tcpProxy>>;
let t: TestStack;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  proxy = await tcpProxy(base.hostname, Number(base.port || 5432));
  const url = new URL(base.toString());
  url.port = String(proxy.port);
  url.pathname = `/${name}`;
  t = await startTestStack({ subgraphs: ['scoring'], env: { DATABASE_URL: url.toString(), DB_CONNECT_TIMEOUT_MS: '1000' } });
});

afterAll(async () => {
  await t?.close();
  await proxy?.close();
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.end();
});

describe('database down and back', () => {
  it('answers 503 while the database is unreachable, never hangs, and recovers by itself', async () => {
    const users = '/shared-mobility-insights/v2/users';
    expect((await t.request('POST', users, { token: t.token, body: { userId: 'before' } })).status).toBe(201);

    proxy.cut();
    const statuses: number[] = [];
    const started = Date.now();
    for (let i = 0; i < 10; i++) {
      const res = await t.request('GET', `${users}/before`, { token: t.token });
      statuses.push(res.status);
      if (res.status === 503) {
        expect(res.headers.get('content-type')).toMatch(/problem\+json/);
        expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    }
    const elapsed = Date.now() - started;
    expect(statuses.every((s) => s === 503), statuses.join(',')).toBe(true);
    expect(elapsed / statuses.length).toBeLessThan(5_000);
    const ready = await t.request('GET', '/readyz');
    expect(ready.status).toBe(503);
    // Past the client-status cache the token's revocation check needs the database too: still 503, never 500.
    await new Promise((r) => setTimeout(r, REVOCATION_CACHE_MS + 200));
    const late = await t.request('GET', `${users}/before`, { token: t.token });
    expect(late.status).toBe(503);
    expect(late.body.code).toBe('SERVICE_UNAVAILABLE');
    const lateGraphql = await t.graphql('{ user(userId: "before") { userId } }');
    expect(lateGraphql.status).toBe(503);
    expect(lateGraphql.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');

    proxy.restore();
    let recovered = 0;
    for (let i = 0; i < 20 && recovered === 0; i++) {
      const res = await t.request('GET', `${users}/before`, { token: t.token });
      if (res.status === 200) recovered = i + 1;
      else await new Promise((r) => setTimeout(r, 250));
    }
    expect(recovered).toBeGreaterThan(0);
    expect((await t.request('POST', users, { token: t.token, body: { userId: 'after' } })).status).toBe(201);
    console.log(`database fault: ${statuses.length} requests while down, all 503, mean ${Math.round(elapsed / statuses.length)} ms; recovered after ${recovered} attempt(s)`);
  });
});
