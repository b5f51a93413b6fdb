/**
 * Two gateway processes, each running the webhooks subgraph, on one PostgreSQL database and one
 * nats-server of the test's own: both take events from the one durable `webhooks` consumer, and each
 * event reaches each subscription once. Runs in both CI runs: without DATABASE_URL it uses the
 * machine's PostgreSQL (a database of its own, dropped after).
 */
import { randomBytes } from 'node:crypto';
import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../support/child-server.ts';
import { testDatabase } from '../support/database.ts';
import { startNatsServer, type NatsServer } from '../support/nats-server.ts';
import { startReceiver, waitFor } from '../webhooks/receiver.ts';

const POSTGRES = process.env.DATABASE_URL ?? process.env.CI_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const CLIENT = { id: 'multi-webhooks', secret: 'multi-webhooks-secret-0123456789' };
const REG = '/registration/v2';
const USERS = 12;

let database: Awaited<ReturnType<typeof testDatabase>>;
let nats: NatsServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let servers: ChildServer[] = [];

beforeAll(async () => {
  database = await testDatabase(POSTGRES, 'multiwh');
  nats = await startNatsServer();
  receiver = await startReceiver();
  const pair = await generateKeyPair('EdDSA', { extractable: true });
  const env = {
    ...database.env, NATS_URL: nats.url, PGLITE_IN_MEMORY: 'false', LOG_LEVEL: 'warn',
    JWT_PRIVATE_KEY: await exportPKCS8(pair.privateKey), JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey),
    MVR_ENCRYPTION_KEY: randomBytes(32).toString('base64'), INTERNAL_HOP_KEY: randomBytes(32).toString('base64url'),
    BOOTSTRAP_CLIENT_ID: CLIENT.id, BOOTSTRAP_CLIENT_SECRET: CLIENT.secret, RATE_LIMIT_PER_MINUTE: '100000',
    WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_INTERVAL_MS: '100',
  };
  // One after the other: the first applies the migrations and creates the stream and its consumers.
  servers.push(await startChildServer(env));
  servers.push(await startChildServer(env));
}, 300_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  servers = [];
  await receiver?.close();
  await nats?.close();
  await database?.drop();
});

const tokenOf = async (server: ChildServer) => {
  const res = await fetch(`${server.base}/platform/oauth/v1/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT.id, client_secret: CLIENT.secret }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
};
const post = async (server: ChildServer, token: string, path: string, body: unknown) => {
  const res = await fetch(`${server.base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(res.status, `${path}: ${await res.clone().text()}`).toBeLessThan(300);
  return res.json() as Promise<Record<string, string>>;
};

it('delivers each event once per subscription while two processes share the durable consumer', async () => {
  const tokens = await Promise.all(servers.map(tokenOf));
  const consents = await post(servers[0], tokens[0], '/platform/webhooks/v1/subscriptions', { url: `${receiver.url}/consents`, eventTypes: ['consent.changed'] });
  const both = await post(servers[1], tokens[1], '/platform/webhooks/v1/subscriptions', { url: `${receiver.url}/both`, eventTypes: ['consent.changed', 'device.status_changed'] });
  // Writes through both processes, so both relays publish and both workers are busy.
  for (let i = 0; i < USERS; i += 1) {
    const at = i % 2;
    await post(servers[at], tokens[at], `${REG}/users`, { userId: `mp-${i}` });
    await post(servers[at], tokens[at], `${REG}/consents`, {
      userId: `mp-${i}`, type: 'location-tracking', version: '1', granted: true, timestamp: '2026-01-01T00:00:00Z', source: 'app',
    });
  }
  const arrived = (path: string) => receiver.received.filter((r) => r.path === path);
  await waitFor(() => arrived('/consents').length >= USERS && arrived('/both').length >= USERS, 30_000, `${USERS} events at each receiver`);
  // Time for a second copy of any event to arrive, were one on its way.
  await new Promise((r) => setTimeout(r, 1_500));
  for (const [path, sub] of [['/consents', consents], ['/both', both]] as const) {
    const hits = arrived(path);
    expect(hits).toHaveLength(USERS);
    expect(new Set(hits.map((h) => h.json.id)).size).toBe(USERS);
    expect(hits.map((h) => h.json.data.resource.userId).sort()).toEqual(Array.from({ length: USERS }, (_, i) => `mp-${i}`).sort());
    for (const hit of hits) expect(receiver.verify(sub.secret, hit)).toMatchObject({ type: 'consent.changed' });
  }
  // One event, one id, for both subscriptions.
  expect(new Set(arrived('/consents').map((h) => h.json.id))).toEqual(new Set(arrived('/both').map((h) => h.json.id)));
}, 120_000);
