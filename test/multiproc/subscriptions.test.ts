/**
 * Subscriptions across gateway processes on one PostgreSQL database and a nats-server of the test's
 * own: the subscriber holds its graphql-ws subscription on gateway A while the provider's updates go
 * through gateway B, so each event reaches A only through the JetStream stream (B's relay publishes it,
 * A's live consumer takes it). Runs in both CI runs: without DATABASE_URL it uses the machine's
 * PostgreSQL (its own database, dropped after).
 */
import { randomBytes } from 'node:crypto';
import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../support/child-server.ts';
import { testDatabase } from '../support/database.ts';
import { startNatsServer, type NatsServer } from '../support/nats-server.ts';
import { gatewayClient } from '../support/http.ts';
import { adminToken } from '../support/stack.ts';
import { wsClient, type Closed, type Watcher } from '../support/subscriptions.ts';
import { subscriptionsHeld, untilHeld } from '../support/subscriptions-held.ts';
import { dispatch, provision, session } from '../roadside/helpers.ts';

const POSTGRES = process.env.DATABASE_URL ?? process.env.CI_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const OPERATOR = { id: 'operator', secret: 'operator-secret-0123456789' };
const STATUSES = ['EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED'];
const RESCUE_UPDATED = 'subscription Track($reqId: ID!) { rescueUpdated(reqId: $reqId) { id reqId status etaMinutes } }';
const UPDATE = 'mutation Move($reqId: ID!, $status: RescueStatus!) { updateRescueStatus(input: { reqId: $reqId, status: $status, latitude: 41.88, longitude: -87.636 }) { status } }';

let database: Awaited<ReturnType<typeof testDatabase>>;
let nats: NatsServer;
let a: ChildServer;
let b: ChildServer;
const clients: ReturnType<typeof wsClient>[] = [];

const http = (server: ChildServer) => gatewayClient(() => server.base);
/** An operator token with the admin scope, from `server`. */
const operatorToken = (server: ChildServer) => adminToken({ request: http(server).request, client: OPERATOR });

/** A new client of `organisation` (created through `server`'s admin API) and a token for it. */
async function client(server: ChildServer, organisation: string) {
  const { request, tokenFor } = http(server);
  const created = await request('POST', '/platform/admin/v1/clients', { token: await operatorToken(server), body: { organisation } });
  if (created.status !== 201) throw new Error(`create client: ${created.status} ${JSON.stringify(created.body)}`);
  const { clientId, clientSecret } = created.body as { clientId: string; clientSecret: string };
  return { clientId, token: await tokenFor(clientId, clientSecret) };
}

/** A dispatched rescue of `token`'s organisation, booked through `server`. */
async function rescue(server: ChildServer, token: string): Promise<string> {
  const caller = http(server);
  const member = await provision(caller, token);
  const res = await dispatch(caller, token, await session(caller, token, [{ key: 'vin', value: member.vin }]));
  if (res.status !== 201 && res.status !== 200) throw new Error(`dispatch: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { requestId: string }).requestId;
}

async function move(server: ChildServer, token: string, reqId: string, status: string) {
  const res = await http(server).request('POST', '/graphql', { token, body: { query: UPDATE, variables: { reqId, status } } });
  expect(res.body, status).toEqual({ data: { updateRescueStatus: { status: 'OK' } } });
}

const statuses = (w: Watcher) => w.results.map((result) => (result.data?.rescueUpdated as { status: string } | undefined)?.status);

/** `token`'s graphql-ws connection to `server`, disposed after the tests. */
function connect(server: ChildServer, token: string) {
  const c = wsClient(server.base, `Bearer ${token}`);
  clients.push(c);
  return c;
}

beforeAll(async () => {
  database = await testDatabase(POSTGRES);
  nats = await startNatsServer();
  const pair = await generateKeyPair('EdDSA', { extractable: true });
  const env = {
    ...database.env, NATS_URL: nats.url, REDIS_URL: REDIS, REDIS_KEY_PREFIX: `frg-test-${randomBytes(6).toString('hex')}:`, PGLITE_IN_MEMORY: 'false', LOG_LEVEL: 'warn',
    JWT_PRIVATE_KEY: await exportPKCS8(pair.privateKey), JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey),
    MVR_ENCRYPTION_KEY: randomBytes(32).toString('base64'), INTERNAL_HOP_KEY: randomBytes(32).toString('base64url'),
    BOOTSTRAP_CLIENT_ID: OPERATOR.id, BOOTSTRAP_CLIENT_SECRET: OPERATOR.secret,
  };
  a = await startChildServer(env);
  b = await startChildServer(env);
}, 300_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.dispose()));
  await Promise.all([a?.stop(), b?.stop()]);
  await database?.drop();
  await nats?.close();
});

describe('a subscriber on gateway A, the updates through gateway B', () => {
  it('receives every status committed through B, in order, none missing; another organisation watching the same id receives nothing', async () => {
    const provider = await client(b, 'org-live');
    const watcher = await client(a, 'org-live');
    const stranger = await client(a, 'org-other');
    const reqId = await rescue(b, provider.token);

    const held = await subscriptionsHeld(a.base);
    const tracked = connect(a, watcher.token).subscribe(RESCUE_UPDATED, { reqId });
    const foreign = connect(a, stranger.token).subscribe(RESCUE_UPDATED, { reqId });
    await untilHeld(a.base, held + 2);

    for (const [i, status] of STATUSES.entries()) {
      await move(b, provider.token, reqId, status);
      await expect.poll(() => tracked.results.length, { timeout: 15_000 }).toBe(i + 1);
    }
    expect(statuses(tracked)).toEqual(STATUSES);
    expect(tracked.results.every((result) => !result.errors)).toBe(true);
    expect(foreign.results).toEqual([]);
  }, 120_000);

  it('with nats-server stopped, the updates through B are acknowledged and their events reach A, every one, once it is back', async () => {
    const provider = await client(b, 'org-outage');
    const watcher = await client(a, 'org-outage');
    const reqId = await rescue(b, provider.token);
    const held = await subscriptionsHeld(a.base);
    const tracked = connect(a, watcher.token).subscribe(RESCUE_UPDATED, { reqId });
    await untilHeld(a.base, held + 1);
    await nats.stop();
    try {
      for (const status of STATUSES) await move(b, provider.token, reqId, status);
      expect(tracked.results).toEqual([]);
    } finally {
      await nats.start();
    }
    // One result per event, none lost; each runs the query when its event arrives, so reads the rescue as it is now.
    await expect.poll(() => tracked.results.length, { timeout: 30_000 }).toBe(STATUSES.length);
    expect(statuses(tracked)).toEqual(STATUSES.map(() => 'COMPLETED'));
  }, 120_000);

  it('closes the subscription on A of a client disabled through B with 4401', async () => {
    const provider = await client(b, 'org-revoke');
    const watcher = await client(a, 'org-revoke');
    const reqId = await rescue(b, provider.token);
    const held = await subscriptionsHeld(a.base);
    const connection = connect(a, watcher.token);
    const tracked = connection.subscribe(RESCUE_UPDATED, { reqId });
    await untilHeld(a.base, held + 1);
    await move(b, provider.token, reqId, 'EN_ROUTE');
    await expect.poll(() => tracked.results.length, { timeout: 15_000 }).toBe(1);

    const disabled = await http(b).request('POST', `/platform/admin/v1/clients/${watcher.clientId}/disable`, { token: await operatorToken(b) });
    expect(disabled.status).toBeLessThan(300);
    // Position reports (the same status again) until A sees the revocation: bounded, and each one an event.
    let ended: Closed | undefined;
    void connection.closed.then((e) => { ended = e; });
    for (let i = 0; i < 40 && !ended; i++) {
      await move(b, provider.token, reqId, 'EN_ROUTE');
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(ended).toMatchObject({ code: 4401 });
    expect(ended?.reason).toMatch(/^Unauthorized/);
  }, 120_000);
});
