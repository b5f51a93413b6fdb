/**
 * docker-compose.yml's topology without Docker: every subgraph `node subgraphs/serve.ts <name>` on a
 * host of its own (a network namespace), the gateway on another reaching them at <NAME>_URL with
 * INTERNAL_HOP_KEY, PostgreSQL, Redis and a nats-server of the test's own on the machine itself
 * (forwarded from the root namespace's LAN address to their loopback). Each host has its own DATA_DIR and its keys from the environment.
 * Runs on PostgreSQL in both CI runs (the machine's, a database of its own); skipped, saying why,
 * only where namespaces cannot be made or PostgreSQL/Redis do not answer.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subgraphUrlVariable } from '../../subgraphs/platform/config.ts';
import { INTERNAL_HOP_HEADER, signHop } from '../../subgraphs/platform/internal-hop.ts';
import { testDatabase } from '../support/database.ts';
import { startNatsServer, type NatsServer } from '../support/nats-server.ts';
import { gatewayClient } from '../support/http.ts';
import { hostKeys } from '../support/host-keys.ts';
import { createLan, namespacesUnavailable, removeLeftovers, type HostProcess, type Lan } from '../support/netns.ts';
import { adminToken, DEFAULT_CLIENT } from '../support/stack.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';
import { waitFor, type Received } from '../webhooks/receiver.ts';
import { dispatch, provision, roadsideToken, RS, session, status } from '../roadside/helpers.ts';
import { sourceAFull } from '../scoring/mvr-fixtures.ts';

const SUBGRAPHS = ['booking', 'scoring', 'roadside', 'registration', 'risk', 'webhooks'];
const POSTGRES = process.env.DATABASE_URL ?? process.env.CI_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const REDIS = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
const SMI = '/shared-mobility-insights/v2';
const REG = '/registration/v2';
const VIN = '1HGCM82633A004352';
const SUBGRAPH_TIMEOUT_MS = 4_000;
const EVENTS = ['booking.started', 'booking.ended', 'mvr.created', 'device.status_changed', 'rescue.status_changed'];

const answers = (port: number, host: string) => new Promise<boolean>((resolve) => {
  const socket = net.connect(port, host, () => { socket.end(); resolve(true); }).on('error', () => resolve(false));
});
const pgUrl = new URL(POSTGRES);
const skipReason = await namespacesUnavailable()
  ?? (await answers(Number(pgUrl.port || 5432), pgUrl.hostname) ? null : `PostgreSQL does not answer at ${pgUrl.host}`)
  ?? (await answers(Number(REDIS.port || 6379), REDIS.hostname) ? null : `Redis does not answer at ${REDIS.host}`);
if (skipReason) console.warn(`test/multihost/compose-topology.test.ts SKIPPED: ${skipReason} (it needs root, iproute2's \`ip netns\`, PostgreSQL and Redis)`);

const started = performance.now();
const figures: Record<string, unknown> = { hosts: SUBGRAPHS.length + 1 };
const processes: Record<string, HostProcess> = {};
const folders: string[] = [];
const envOf: Record<string, Record<string, string>> = {};
let lan: Lan;
let forwarders: Awaited<ReturnType<typeof tcpProxy>>[] = [];
let database: Awaited<ReturnType<typeof testDatabase>>;
let nats: NatsServer;
let receiver: HostProcess;
let receiverUrl: string;
let gatewayUrl: string;
const client = gatewayClient(() => gatewayUrl);
let token: string;

const healthy = (url: string) => fetch(url).then((r) => r.ok, () => false);
const hostUrl = (name: string) => `http://${lan.hosts[name]!.address}:4000`;

/** Starts one host's process and waits for its /healthz (or its exit, with its output). */
async function startHost(name: string, args: string[]) {
  const host = processes[name] = lan.hosts[name]!.node(args, envOf[name]!);
  await waitFor(async () => host.child.exitCode !== null || await healthy(`${hostUrl(name)}/healthz`), 120_000, `${name} to start`);
  if (host.child.exitCode !== null) throw new Error(`${name} exited with ${host.child.exitCode}:\n${host.output().slice(-3000)}`);
}

async function graphql(query: string, signal?: AbortSignal) {
  const res = await client.request('POST', '/graphql', { token, body: { query }, signal });
  return res.body as { data?: Record<string, any>; errors?: { message: string; extensions?: { code?: string } }[] }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function ok(method: string, path: string, body?: unknown, bearer = token) {
  const res = await client.request(method, path, { token: bearer, body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

/** Deliveries the receiver on the webhooks host has printed so far. */
const received = () => receiver.stdout().split('\n').slice(1).filter(Boolean).map((line) => JSON.parse(line) as Received);
const delivered = (type: string, match: (r: Received) => boolean = () => true) =>
  waitFor(() => received().find((r) => r.json.type === type && match(r)), 15_000, `a ${type} delivery`);

async function expectNotReady(name: string, signal?: AbortSignal) {
  const res = await client.request('GET', '/readyz', { signal });
  expect(res.status).toBe(503);
  expect(res.body.checks).toMatchObject({ ...Object.fromEntries(SUBGRAPHS.map((n) => [n, true])), [name]: false });
}

/** Ten bookings started and ended (from `start`, a day apart): the ids whose start and end were both acknowledged, and the answers to the others. */
async function writeBookings(prefix: string, start: number) {
  const acknowledged: string[] = [];
  const failed: string[] = [];
  for (let i = 0; i < 10; i++) {
    const id = `${prefix}-${i}`;
    const at = start + i * 86_400;
    const booking = await client.request('POST', `${SMI}/bookings`, { token, body: { bookingID: id, VIN, userID: 'driver-1', startTimestamp: at } });
    const ended = await client.request('PUT', `${SMI}/bookings/${id}`, { token, body: { actualEndTimestamp: at + 3_600 } });
    if (booking.status === 201 && ended.status === 200) acknowledged.push(id);
    else failed.push(`${id}: ${booking.status}, ${ended.status}`);
  }
  figures.writesDuringOutages = (figures.writesDuringOutages as number ?? 0) + acknowledged.length * 2;
  return { acknowledged, failed };
}

/** GET /users/driver-1 (no roadside field) one after another until stopped: how many, and any that did not answer 200. */
function steadyReads() {
  let running = true;
  const failed: string[] = [];
  let count = 0;
  const loop = (async () => {
    while (running) {
      const res = await client.request('GET', `${SMI}/users/driver-1`, { token });
      count += 1;
      if (res.status !== 200) failed.push(`${res.status} ${JSON.stringify(res.body)}`);
    }
  })();
  return { async stop() { running = false; await loop; return { count, failed }; } };
}

/** Starts a stopped host again and waits until the gateway is ready (and `usable` holds): the time each took. */
async function restartHost(name: string, usable = async () => true) {
  const back = performance.now();
  await startHost(name, ['subgraphs/serve.ts', name]);
  const up = performance.now();
  await waitFor(async () => (await client.request('GET', '/readyz')).status === 200 && await usable(), 30_000, `the gateway to use ${name} again`);
  figures[`${name}Restart`] = { hostStartMs: Math.round(up - back), recoveryAfterHostUpMs: Math.round(performance.now() - up) };
}

/** Every acknowledged booking reads back as written, and its two events reach the receiver (counted in figures.requestsLost otherwise). */
async function expectNothingLost(acknowledged: string[]) {
  const unreadable = [];
  for (const id of acknowledged) {
    const read = await client.request('GET', `${SMI}/bookings/${id}`, { token });
    if (read.status !== 200 || read.body.status !== 'ended') unreadable.push(id);
  }
  const committed = acknowledged.flatMap((id) => ['booking.started', 'booking.ended'].map((type) => `${type} ${SMI}/bookings/${id}`));
  const undelivered = () => {
    const seen = new Set(received().map((r) => `${r.json.type} ${r.json.data.path}`));
    return committed.filter((event) => !seen.has(event));
  };
  await waitFor(() => undelivered().length === 0, 15_000, 'every committed event').catch(() => undefined);
  figures.requestsLost = (figures.requestsLost as number ?? 0) + unreadable.length + undelivered().length;
  expect({ unreadable, undelivered: undelivered() }).toEqual({ unreadable: [], undelivered: [] });
}

beforeAll(async () => {
  if (skipReason) return;
  await removeLeftovers();
  lan = await createLan([...SUBGRAPHS, 'gateway']);
  nats = await startNatsServer();
  forwarders = await Promise.all([
    tcpProxy('127.0.0.1', nats.port, { host: lan.address, port: nats.port }),
    tcpProxy(pgUrl.hostname, Number(pgUrl.port || 5432), { host: lan.address, port: 5432 }),
    tcpProxy(REDIS.hostname, Number(REDIS.port || 6379), { host: lan.address, port: 6379 }),
  ]);
  database = await testDatabase(POSTGRES);
  const databaseUrl = new URL(database.env.DATABASE_URL!);
  databaseUrl.host = `${lan.address}:5432`;
  const keys = await hostKeys();
  const common = {
    NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '4000', LOG_LEVEL: 'warn',
    DATABASE_URL: databaseUrl.toString(), NATS_URL: `nats://${lan.address}:${nats.port}`, REDIS_URL: `redis://${lan.address}:6379`, REDIS_KEY_PREFIX: `frg-mh-${randomBytes(6).toString('hex')}:`,
    ...keys.everyHost,
    // Seven processes on one machine's PostgreSQL (and two cores): small pools, no load shedding.
    DB_POOL_MAX: '3', OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
    RATE_LIMIT_PER_MINUTE: '1000000', TOKEN_RATE_LIMIT_PER_MINUTE: '1000000', TOKEN_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000',
  };
  for (const name of [...SUBGRAPHS, 'gateway']) {
    const dataDir = await mkdtemp(join(tmpdir(), `frg-mh-${name}-`));
    folders.push(dataDir);
    envOf[name] = { ...common, DATA_DIR: dataDir };
  }
  Object.assign(envOf.webhooks!, { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_RETRY_BASE_MS: '200' });
  // A host cut off the network answers nothing at all: the gateway gives up on it after this.
  // As compose gives them: the private keys to the gateway alone.
  Object.assign(envOf.gateway!, keys.gatewayOnly);
  Object.assign(envOf.gateway!, { SUBGRAPH_TIMEOUT_MS: String(SUBGRAPH_TIMEOUT_MS) }, Object.fromEntries(SUBGRAPHS.map((name) => [subgraphUrlVariable(name), `${hostUrl(name)}/graphql`])), {
    BOOTSTRAP_CLIENT_ID: DEFAULT_CLIENT.id, BOOTSTRAP_CLIENT_SECRET: DEFAULT_CLIENT.secret, BOOTSTRAP_ORG: DEFAULT_CLIENT.org,
  });
  // As compose does: the subgraphs first (side by side; their migrations take turns), then the gateway.
  await Promise.all(SUBGRAPHS.map((name) => startHost(name, ['subgraphs/serve.ts', name])));
  await startHost('gateway', ['gateway/server.ts']);
  gatewayUrl = hostUrl('gateway');
  receiver = lan.hosts.webhooks!.node(['test/support/receiver-host.ts'], {});
  receiverUrl = (await waitFor(() => /^\{"url":"([^"]+)"\}/.exec(receiver.stdout())?.[1], 30_000, 'the receiver'));
  token = await client.tokenFor(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret);
  // As an operator does before sending traffic: on PostgreSQL the risk host loads its data in the background (503 meanwhile).
  await waitFor(async () => (await client.request('GET', '/readyz')).status === 200, 120_000, 'the gateway to be ready');
  figures.startedMs = Math.round(performance.now() - started);
}, 300_000);

afterAll(async () => {
  await Promise.all(Object.values(processes).map((p) => p.stop()));
  await receiver?.stop();
  await Promise.all(forwarders.map((f) => f.close()));
  await lan?.close();
  await database?.drop();
  await nats?.close();
  await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
  if (skipReason) return;
  figures.totalMs = Math.round(performance.now() - started);
  process.stdout.write(`multi-host figures: ${JSON.stringify(figures)}\n`);
  expect(client.contract.violations).toEqual([]);
}, 120_000);

describe.skipIf(Boolean(skipReason))('the compose topology, one host per subgraph and one for the gateway', () => {
  let secret: string;
  let rescue: { reqId: string; sessionId: string; roadsideToken: string };

  it('is ready, every subgraph reached over the LAN and open to nothing but the gateway\'s hop', async () => {
    const ready = await client.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toMatchObject(Object.fromEntries(SUBGRAPHS.map((name) => [name, true])));
    // A subgraph host answers only the gateway's signed hop, even with a valid token; on the hop, only the gateway's internal token.
    const body = JSON.stringify({ query: '{ vehicle(vin: "x") { vin } }' });
    const direct = (hop: Record<string, string>) => fetch(`${hostUrl('booking')}/graphql`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...hop }, body,
    });
    expect((await direct({})).status).toBe(401);
    const signed = await direct({ [INTERNAL_HOP_HEADER]: signHop(envOf.gateway!.INTERNAL_HOP_KEY!, { method: 'POST', target: '/graphql', body }) });
    expect(signed.status).toBe(401);
    expect(((await signed.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('refuses a disabled client\'s token on GraphQL and REST at once, its subgraphs on hosts of their own', async () => {
    const admin = await adminToken({ request: client.request, client: DEFAULT_CLIENT });
    const created = await ok('POST', '/platform/admin/v1/clients', { organisation: 'org-revoked', scopes: ['b2b'] }, admin);
    const revoked = await client.tokenFor(created.clientId, created.clientSecret);
    const calls = async () => [
      (await client.request('POST', '/graphql', { token: revoked, body: { query: `{ vehicle(vin: "${VIN}") { vin } }` } })).status,
      (await client.request('GET', `${SMI}/vehicles/${VIN}`, { token: revoked })).status,
    ];
    expect(await calls()).toEqual([200, 404]);
    await ok('POST', `/platform/admin/v1/clients/${created.clientId}/disable`, undefined, admin);
    expect(await calls()).toEqual([401, 401]);
  });

  it('takes a webhook subscription to a receiver on the webhooks host\'s loopback', async () => {
    const sub = await ok('POST', '/platform/webhooks/v1/subscriptions', { url: `${receiverUrl}/hooks`, eventTypes: EVENTS });
    secret = sub.secret;
    expect(secret).toMatch(/^whsec_/);
  });

  it('runs the README walk-through across the hosts', async () => {
    // A. users, vehicles, bookings
    await ok('POST', `${SMI}/users`, { userID: 'driver-1' });
    await ok('POST', `${SMI}/vehicles`, { VIN, deviceID: '356938035643809' });
    await ok('POST', `${SMI}/bookings`, { bookingID: 'b-1', VIN, userID: 'driver-1', startTimestamp: 1795000000, estimatedEndTimestamp: 1795086400 });
    await ok('PUT', `${SMI}/bookings/b-1`, { actualEndTimestamp: 1795080000 });
    // B. the data a score needs, a full MVR, the score
    await ok('PATCH', `${SMI}/users/driver-1`, { dateOfBirth: '1985-04-12', homeZip: '60601' });
    await ok('POST', `${SMI}/users/driver-1/sourcea-mvr`, sourceAFull());
    const score = await ok('GET', `${SMI}/users/driver-1/prequal-coverage-score`);
    expect(score.score).toEqual(expect.any(Number));
    await ok('PUT', `${SMI}/users/driver-1/enrollment`, { enrollmentStatus: 'accepted' });
    // C. a rescue, on the roadside host's own token endpoint
    const roadside = (await roadsideToken(client, DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret)).body.access_token as string;
    const member = await provision(client, roadside);
    const sessionId = await session(client, roadside, [{ key: 'vin', value: member.vin }]);
    const created = await dispatch(client, roadside, sessionId);
    expect(created.status).toBe(201);
    rescue = { reqId: created.body.requestId, sessionId, roadsideToken: roadside };
    expect((await status(client, roadside, rescue.reqId, 'EN-ROUTE', { sessionId })).status).toBe(200);
    // D. registration
    await ok('POST', `${REG}/users`, { userId: 'reg-1' });
    await ok('PUT', `${REG}/devices/dev-1/users/reg-1`, { effectiveDate: '2026-01-01', type: 'mobile' });
    await ok('PUT', `${REG}/devices/dev-1/status`, { status: 'Inactive' });
    // E. the Risk Index, no token
    const risk = await client.request('GET', '/riskIndex/v1/riskInfo?geometry=LINESTRING(-87.6766%2041.8813,-87.6718%2041.8814)&radius=0.002');
    expect(risk.status).toBe(200);
    const map = await client.request('GET', '/riskIndex/v1/map?geometry=POINT(-87.6298%2041.8781)&radius=0.02');
    expect(map.status).toBe(200);
    expect(map.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    // One query over four subgraph hosts.
    const whole = await graphql(`{ user(userId: "driver-1") { userId enrollmentStatus bookings { nodes { bookingId vehicle { vin } } }
      prequalCoverageScore { ... on PrequalCoverageScore { score } } } rescue(reqId: "${rescue.reqId}") { reqId status } }`);
    expect(whole.errors).toBeUndefined();
    expect(whole.data?.user).toMatchObject({ userId: 'driver-1', enrollmentStatus: 'ACCEPTED', bookings: { nodes: [{ bookingId: 'b-1', vehicle: { vin: VIN } }] } });
    expect(whole.data?.rescue).toEqual({ reqId: rescue.reqId, status: 'EN_ROUTE' });
  });

  it('delivers every area\'s events, signed, from the webhooks host', async () => {
    for (const type of EVENTS) {
      const hit = await delivered(type);
      expect(new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>)).toBeTruthy();
    }
  });

  it('keeps answering without the roadside host, names it, and recovers with nothing lost when it comes back', async () => {
    const reads = steadyReads();
    await processes.roadside!.stop('SIGKILL'); // the machine goes away: no drain
    const across = await graphql(`{ user(userId: "driver-1") { userId } rescue(reqId: "${rescue.reqId}") { status } }`);
    expect(across.data?.user).toEqual({ userId: 'driver-1' });
    expect(across.data?.rescue ?? null).toBeNull();
    expect(across.errors?.[0]?.message).toMatch(/roadside/);
    expect(across.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
    const benefits = () => client.request('GET', `${RS}/rescue/benefits?sessionId=${rescue.sessionId}`, { token: rescue.roadsideToken });
    const rest = await benefits();
    expect(rest.status).toBe(503);
    expect(rest.body.code).toBe('SERVICE_UNAVAILABLE');
    await expectNotReady('roadside');

    // Writes while it is down: every one acknowledged must be readable later, every event it commits delivered.
    const written = await writeBookings('roadside-down', 1795100000);
    const refused = [];
    for (let i = 0; i < 5; i++) refused.push((await status(client, rescue.roadsideToken, rescue.reqId, 'APPROACHING', { sessionId: rescue.sessionId })).status);
    expect(written.failed).toEqual([]);
    expect(refused).toEqual(Array(5).fill(503));

    await restartHost('roadside', async () => (await benefits()).status === 200);
    const { count, failed } = await reads.stop();
    figures.readsOfOtherSubgraphsDuringRoadsideOutage = count;
    expect(failed).toEqual([]);
    expect((await status(client, rescue.roadsideToken, rescue.reqId, 'APPROACHING', { sessionId: rescue.sessionId })).status).toBe(200);
    const whole = await graphql(`{ user(userId: "driver-1") { userId } rescue(reqId: "${rescue.reqId}") { status } }`);
    expect(whole.errors).toBeUndefined();
    expect(whole.data?.rescue).toEqual({ status: 'APPROACHING' });
    await expectNothingLost(written.acknowledged);
    await delivered('rescue.status_changed', (r) => r.json.data.resource?.status === 'APPROACHING');
  }, 120_000);

  it('answers without the registration host while it is cut off the network, and uses it again once it is back', async () => {
    // The host neither answers nor refuses: every request must still end, bounded by SUBGRAPH_TIMEOUT_MS (with room for a loaded machine).
    const bounded = () => AbortSignal.timeout(SUBGRAPH_TIMEOUT_MS * 4);
    const consents = () => client.request('GET', `${REG}/consents/reg-1`, { token, signal: bounded() });
    expect((await consents()).status).toBe(200);
    await lan.hosts.registration!.plug(false);
    try {
      const across = await graphql('{ user(userId: "driver-1") { userId } registeredUser(userId: "reg-1") { userId } }', bounded());
      expect(across.data?.user).toEqual({ userId: 'driver-1' });
      expect(across.data?.registeredUser ?? null).toBeNull();
      expect(across.errors?.[0]?.message).toMatch(/registration/);
      expect(across.errors?.[0]?.extensions?.code).toBe('SERVICE_UNAVAILABLE');
      const rest = await consents();
      expect(rest.status).toBe(503);
      await expectNotReady('registration', bounded());
    } finally {
      await lan.hosts.registration!.plug(true);
    }
    const plugged = performance.now();
    await waitFor(async () => (await client.request('GET', '/readyz')).status === 200 && (await consents()).status === 200, 30_000, 'the gateway to use registration again');
    figures.registrationReconnectedMs = Math.round(performance.now() - plugged);
  }, 60_000);

  it('keeps taking writes without the webhooks host and delivers their events once it is back', async () => {
    await processes.webhooks!.stop('SIGKILL');
    await expectNotReady('webhooks');
    const written = await writeBookings('webhooks-down', 1796100000);
    expect(written.failed).toEqual([]);
    expect(received().filter((r) => r.json.data.path.includes('/webhooks-down-'))).toEqual([]); // held in the outboxes, not sent
    await restartHost('webhooks');
    await expectNothingLost(written.acknowledged);
  }, 120_000);
});
