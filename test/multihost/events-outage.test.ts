/**
 * The event path across outages (issue 37), on hosts of their own (network namespaces, as
 * compose-topology.test.ts): NATS JetStream on a host, booking and webhooks each `node subgraphs/serve.ts`
 * on a host, the gateway on another running scoring, roadside, registration and risk in its process; every
 * area in a PostgreSQL database of its own (`<NAME>_DATABASE_URL`), the gateway's `platform` in DATABASE_URL.
 * It cuts the NATS host off the network (writes go on, events wait in the outboxes, then all arrive in
 * order), and kills (SIGKILL) the booking host while its relay has published events and not yet deleted
 * them (nothing lost, nothing delivered twice). Skipped, saying why, only where namespaces cannot be made,
 * nats-server is missing or PostgreSQL does not answer.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AREA_NAMES, databaseUrlVariable, subgraphUrlVariable } from '../../subgraphs/platform/config.ts';
import { testDatabase } from '../support/database.ts';
import { gatewayClient } from '../support/http.ts';
import { hostKeys } from '../support/host-keys.ts';
import { natsServerBin } from '../support/nats-server.ts';
import { relayLockKey } from '../../subgraphs/platform/events/relay.ts';
import { createLan, namespacesUnavailable, removeLeftovers, type HostProcess, type Lan } from '../support/netns.ts';
import { DEFAULT_CLIENT } from '../support/stack.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';
import { waitFor, type Received } from '../webhooks/receiver.ts';

/** Hosts of their own; the other areas run inside the gateway's process. */
const HOSTED = ['booking', 'webhooks'];
const POSTGRES = process.env.DATABASE_URL ?? process.env.CI_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const SMI = '/shared-mobility-insights/v2';
const EVENTS = ['booking.started', 'booking.ended', 'user.updated'];
const NATS_PORT = 4222;
/** The advisory lock the test holds to hold the booking relay's delete (see holdDeletes). */
const DELETE_GATE = 3_700_371;

const answers = (port: number, host: string) => new Promise<boolean>((resolve) => {
  const socket = net.connect(port, host, () => { socket.end(); resolve(true); }).on('error', () => resolve(false));
});
const pgUrl = new URL(POSTGRES);
const skipReason = await namespacesUnavailable()
  ?? (existsSync(natsServerBin()) ? null : `no nats-server at ${natsServerBin()} (NATS_SERVER_BIN)`)
  ?? (await answers(Number(pgUrl.port || 5432), pgUrl.hostname) ? null : `PostgreSQL does not answer at ${pgUrl.host}`);
if (skipReason) console.warn(`test/multihost/events-outage.test.ts SKIPPED: ${skipReason} (it needs root, iproute2's \`ip netns\`, nats-server and PostgreSQL)`);

const started = performance.now();
const figures: Record<string, unknown> = {};
const processes: Record<string, HostProcess> = {};
const folders: string[] = [];
const envOf: Record<string, Record<string, string>> = {};
const databases: Record<string, Awaited<ReturnType<typeof testDatabase>>> = {};
let lan: Lan;
let forwarder: Awaited<ReturnType<typeof tcpProxy>> | undefined;
let nats: HostProcess;
let receiver: HostProcess;
let receiverUrl: string;
let gatewayUrl: string;
const client = gatewayClient(() => gatewayUrl);
let token: string;
let secret: string;
let vin = 0;

const healthy = (url: string) => fetch(url).then((r) => r.ok, () => false);
const hostUrl = (name: string) => `http://${lan.hosts[name]!.address}:4000`;
/** An area's database as the test reaches it (not through the LAN). */
const areaDatabase = (name: string) => databases[name]!.env.DATABASE_URL!;

async function query<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []) {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    return (await db.query<T>(sql, values)).rows;
  } finally {
    await db.end();
  }
}
const waiting = async (area: string) => (await query<{ n: number }>(areaDatabase(area), `select count(*)::int as n from "${area}".webhook_outbox`))[0]!.n;

/** Starts one host's process and waits for its /healthz (or its exit, with its output). */
async function startHost(name: string, args: string[]) {
  const host = processes[name] = lan.hosts[name]!.node(args, envOf[name]!);
  await waitFor(async () => host.child.exitCode !== null || await healthy(`${hostUrl(name)}/healthz`), 120_000, `${name} to start`);
  if (host.child.exitCode !== null) throw new Error(`${name} exited with ${host.child.exitCode}:\n${host.output().slice(-3000)}`);
}

async function ok(method: string, path: string, body?: unknown) {
  const res = await client.request(method, path, { token, body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

/** Deliveries the receiver on the webhooks host accepted so far, each checked against the subscription's signature. */
const received = () => receiver.stdout().split('\n').slice(1).filter(Boolean).map((line) => JSON.parse(line) as Received)
  .map((r) => ({ ...r, event: new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { id: string; type: string; data: { path: string } } }));
const deliveredFor = (prefix: string) => received().filter((r) => r.event.data.path.includes(`/${prefix}-`));

/** The homeZips given to driver-1, in commit order. */
const zipsWritten: string[] = [];

/** `count` vehicles, each with a booking started then ended (booking's outbox), and an update of user `driver-1` each (scoring's, in the gateway's process). */
async function write(prefix: string, count: number, start: number) {
  const acknowledged: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = `${prefix}-${i}`;
    vin += 1;
    const VIN = `1HGCM82633A${String(100000 + vin).slice(-6)}`;
    const at = start + i * 86_400;
    const answers = [
      await client.request('POST', `${SMI}/vehicles`, { token, body: { VIN, deviceID: `3569380356${String(10_000 + vin).slice(-5)}` } }),
      await client.request('POST', `${SMI}/bookings`, { token, body: { bookingID: id, VIN, userID: 'driver-1', startTimestamp: at } }),
      await client.request('PUT', `${SMI}/bookings/${id}`, { token, body: { actualEndTimestamp: at + 3_600 } }),
      await client.request('PATCH', `${SMI}/users/driver-1`, { token, body: { homeZip: String(60_000 + vin) } }),
    ];
    zipsWritten.push(String(60_000 + vin));
    expect(answers.map((a) => a.status), `${id}: ${JSON.stringify(answers.map((a) => a.body))}`).toEqual([201, 201, 200, 200]);
    acknowledged.push(id);
  }
  return acknowledged;
}

/** The homeZip of each user.updated delivery of driver-1, in the order received. */
const userZips = () => received().filter((r) => r.event.type === 'user.updated')
  .map((r) => (r.event as unknown as { data: { resource: { homeZip?: string } } }).data.resource.homeZip);

/** No event id was delivered twice, of any area. */
function expectNoEventTwice() {
  const copies = Map.groupBy(received(), (r) => r.event.id);
  expect([...copies.values()].filter((c) => c.length > 1).map((c) => c[0]!.event)).toEqual([]);
}

/** Every booking's two events delivered, started before ended; no event id twice. */
function expectDeliveredOnceInOrder(prefix: string, ids: string[]) {
  const mine = deliveredFor(prefix);
  expectNoEventTwice();
  for (const id of ids) {
    expect(mine.filter((r) => r.event.data.path === `${SMI}/bookings/${id}`).map((r) => r.event.type)).toEqual(['booking.started', 'booking.ended']);
  }
}

/** A session of the test holding an advisory lock in booking's database until `release()`. */
async function holdLock(key: number) {
  const session = new pg.Client({ connectionString: areaDatabase('booking') });
  await session.connect();
  await session.query('select pg_advisory_lock($1)', [key]);
  return { release: () => session.end() };
}

/**
 * Makes every delete from booking's outbox wait for an advisory lock the test holds (a trigger), so that
 * its relay publishes and then waits before deleting: the window a crash may hit.
 */
async function holdDeletes() {
  const url = areaDatabase('booking');
  await query(url, `create or replace function booking.test_hold_delete() returns trigger language plpgsql as $$
    begin perform pg_advisory_lock(${DELETE_GATE}); perform pg_advisory_unlock(${DELETE_GATE}); return null; end $$`);
  await query(url, 'create trigger test_hold_delete before delete on booking.webhook_outbox for each statement execute function booking.test_hold_delete()');
  const gate = await holdLock(DELETE_GATE);
  return {
    /** Lets the waiting delete go (its process is gone: its transaction then rolls back), then drops the trigger. */
    async release() {
      await gate.release();
      await query(url, 'drop trigger if exists test_hold_delete on booking.webhook_outbox');
    },
  };
}

beforeAll(async () => {
  if (skipReason) return;
  await removeLeftovers();
  lan = await createLan(['nats', ...HOSTED, 'gateway']);
  forwarder = await tcpProxy(pgUrl.hostname, Number(pgUrl.port || 5432), { host: lan.address, port: 5432 });
  const overLan = (url: string) => Object.assign(new URL(url), { host: `${lan.address}:5432` }).toString();
  for (const name of ['platform', ...AREA_NAMES]) databases[name] = await testDatabase(POSTGRES, `mhev_${name}`);

  const natsDir = await mkdtemp(join(tmpdir(), 'frg-mhev-nats-'));
  folders.push(natsDir);
  nats = lan.hosts.nats!.run(natsServerBin(), ['-js', '-sd', natsDir, '-a', '0.0.0.0', '-p', String(NATS_PORT)]);
  await waitFor(() => /Server is ready/.test(nats.output()) || nats.child.exitCode !== null, 15_000, 'nats-server');

  const keys = await hostKeys();
  const common = {
    NODE_ENV: 'production', HOST: '0.0.0.0', PORT: '4000', LOG_LEVEL: 'warn', ...keys.everyHost,
    DATABASE_URL: overLan(databases.platform!.env.DATABASE_URL!),
    ...Object.fromEntries(AREA_NAMES.map((name) => [databaseUrlVariable(name), overLan(areaDatabase(name))])),
    NATS_URL: `nats://${lan.hosts.nats!.address}:${NATS_PORT}`, EVENTS_RELAY_POLL_MS: '100',
    // Several processes on one machine's PostgreSQL (and two cores): small pools, no load shedding.
    DB_POOL_MAX: '3', OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
    RATE_LIMIT_PER_MINUTE: '1000000', TOKEN_RATE_LIMIT_PER_MINUTE: '1000000', TOKEN_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000',
  };
  for (const name of [...HOSTED, 'gateway']) {
    const dataDir = await mkdtemp(join(tmpdir(), `frg-mhev-${name}-`));
    folders.push(dataDir);
    envOf[name] = { ...common, DATA_DIR: dataDir };
  }
  Object.assign(envOf.webhooks!, { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_RETRY_BASE_MS: '200' });
  Object.assign(envOf.gateway!, keys.gatewayOnly, Object.fromEntries(HOSTED.map((name) => [subgraphUrlVariable(name), `${hostUrl(name)}/graphql`])), {
    BOOTSTRAP_CLIENT_ID: DEFAULT_CLIENT.id, BOOTSTRAP_CLIENT_SECRET: DEFAULT_CLIENT.secret, BOOTSTRAP_ORG: DEFAULT_CLIENT.org,
  });
  await Promise.all(HOSTED.map((name) => startHost(name, ['subgraphs/serve.ts', name])));
  await startHost('gateway', ['gateway/server.ts']);
  gatewayUrl = hostUrl('gateway');
  receiver = lan.hosts.webhooks!.node(['test/support/receiver-host.ts'], {});
  receiverUrl = (await waitFor(() => /^\{"url":"([^"]+)"\}/.exec(receiver.stdout())?.[1], 30_000, 'the receiver'));
  token = await client.tokenFor(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret);
  // The Risk Index data load into risk's database in the background (503 meanwhile).
  await waitFor(async () => (await client.request('GET', '/readyz')).status === 200, 180_000, 'the gateway to be ready');
  figures.startedMs = Math.round(performance.now() - started);
}, 400_000);

afterAll(async () => {
  await Promise.all(Object.values(processes).map((p) => p.stop()));
  await receiver?.stop();
  await nats?.stop();
  await forwarder?.close();
  await lan?.close();
  await Promise.all(Object.values(databases).map((db) => db.drop()));
  await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
  if (skipReason) return;
  figures.totalMs = Math.round(performance.now() - started);
  process.stdout.write(`multi-host event figures: ${JSON.stringify(figures)}\n`);
  expect(client.contract.violations).toEqual([]);
}, 120_000);

describe.skipIf(Boolean(skipReason))('events through NATS on a host of its own, every area in a database of its own', () => {
  it('keeps each area in its own database and delivers its events, signed, through NATS', async () => {
    for (const name of AREA_NAMES) {
      const schemas = await query<{ name: string }>(areaDatabase(name), 'select nspname as name from pg_namespace where nspname = any($1)', [['platform', ...AREA_NAMES]]);
      expect(schemas.map((s) => s.name)).toEqual([name]);
    }
    const sub = await ok('POST', '/platform/webhooks/v1/subscriptions', { url: `${receiverUrl}/hooks`, eventTypes: EVENTS });
    secret = sub.secret;
    await ok('POST', `${SMI}/users`, { userID: 'driver-1' });
    const ids = await write('first', 1, 1795000000);
    await waitFor(() => deliveredFor('first').length === 2, 30_000, 'the first booking\'s events');
    expectDeliveredOnceInOrder('first', ids);
  }, 60_000);

  it('keeps acknowledging writes while NATS is cut off, holds their events in the outboxes, and delivers them all, in order, once it is back', async () => {
    await lan.hosts.nats!.plug(false);
    const cut = performance.now();
    let ids: string[];
    try {
      ids = await write('cut', 10, 1796000000);
      figures.writesWhileNatsCut = ids.length * 4;
      // Nothing reaches the receiver meanwhile: the events wait in booking's and scoring's outboxes.
      await new Promise((r) => setTimeout(r, 1_000));
      expect(deliveredFor('cut')).toEqual([]);
      expect(await waiting('booking')).toBeGreaterThanOrEqual(ids.length * 2);
      expect(await waiting('scoring')).toBeGreaterThanOrEqual(ids.length);
    } finally {
      await lan.hosts.nats!.plug(true);
    }
    figures.natsCutMs = Math.round(performance.now() - cut);
    const back = performance.now();
    await waitFor(() => deliveredFor('cut').length >= ids.length * 2, 60_000, 'every event committed while NATS was cut');
    figures.allDeliveredAfterNatsBackMs = Math.round(performance.now() - back);
    await waitFor(async () => await waiting('booking') === 0 && await waiting('scoring') === 0, 30_000, 'the outboxes to empty');
    expectDeliveredOnceInOrder('cut', ids);
    // scoring's events (relayed by the gateway's process): every update of driver-1, in commit order.
    await waitFor(() => userZips().length === zipsWritten.length, 30_000, 'every user.updated');
    expect(userZips()).toEqual(zipsWritten);
  }, 180_000);

  it('loses and doubles nothing when the booking host is killed between its relay\'s publish and its delete', async () => {
    // The relay's lock held meanwhile: the writes' ten events wait, then go in one batch.
    const relayLock = await holdLock(relayLockKey('booking'));
    let ids: string[];
    let gate: Awaited<ReturnType<typeof holdDeletes>>;
    try {
      ids = await write('crash', 5, 1797000000);
      gate = await holdDeletes();
    } finally {
      await relayLock.release();
    }
    try {
      // Published (the receiver has them, through NATS and the webhooks host) and still in the outbox: the delete waits.
      await waitFor(() => deliveredFor('crash').length === ids.length * 2, 60_000, 'the relay to publish');
      expect(await waiting('booking')).toBe(ids.length * 2);
      await processes.booking!.stop('SIGKILL');
    } finally {
      await gate.release();
    }
    await startHost('booking', ['subgraphs/serve.ts', 'booking']);
    // The new relay publishes the same rows again (the dead one's transaction rolled back): NATS and the consumers drop them by id.
    await waitFor(async () => await waiting('booking') === 0, 60_000, 'the restarted relay to empty booking\'s outbox');
    const after = await write('after', 1, 1798000000);
    await waitFor(() => deliveredFor('after').length === 2, 30_000, 'an event after the restart');
    expect(deliveredFor('crash')).toHaveLength(ids.length * 2);
    expectDeliveredOnceInOrder('crash', ids);
    expectDeliveredOnceInOrder('after', after);
    expectNoEventTwice();
  }, 180_000);
});
