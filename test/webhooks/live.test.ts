/**
 * Live events: committed outbox events reach a LiveEvents in commit order, rolled-back ones never;
 * on PostgreSQL through LISTEN/NOTIFY, from any connection, to every listener, across a dropped
 * LISTEN connection.
 */
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordEvent } from '../../subgraphs/platform/webhooks/outbox.ts';
import { databaseUrls } from '../../subgraphs/platform/config.ts';
import { LIVE_EVENTS_APPLICATION, startLiveEvents, type LiveEvent, type LiveEvents } from '../../subgraphs/platform/webhooks/live.ts';
import { TENANT_FILTER } from '../../subgraphs/platform/db/tenant.ts';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';
import { waitFor } from './receiver.ts';

const SMI = '/shared-mobility-insights/v2';
const VIN = '1HGCM82633A004352';

let t: TestStack;
let live: LiveEvents;
const received: LiveEvent[] = [];
const logged: { level: number; msg: string }[] = [];
const log = pino({ level: 'info' }, { write: (line: string) => { logged.push(JSON.parse(line)); } });

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['booking'] });
  live = await startLiveEvents({ databaseUrls: databaseUrls(t.config), log });
  live.subscribe((event) => received.push(event));
}, 300_000);
afterAll(async () => {
  await live?.close();
  await t?.close();
});

const booking = () => t.stack.subgraphs.find((s) => s.name === 'booking')!.db;
interface OutboxRow { seq: string; event_id: string; org_id: string; type: string; occurred_at: string }
const outbox = async (resourceKey: string): Promise<OutboxRow[]> => booking().orm.em.getConnection().execute(
  'select seq, event_id, org_id, type, occurred_at from "booking"."webhook_outbox" where resource_key = ? order by seq', [resourceKey]);
const arrived = (resourceKey: string, count: number, from = received) =>
  waitFor(() => { const found = from.filter((e) => e.resourceKey === resourceKey); return found.length >= count ? found : undefined; }, 10_000, `${count} live events of ${resourceKey}`);

/** Records an event on the booking subgraph's outbox in a transaction of its own, which `fail` rolls back. */
async function commitEvent(resourceKey: string, fail = false) {
  const em = booking().orm.em.fork();
  em.setFilterParams(TENANT_FILTER, { orgId: DEFAULT_CLIENT.org });
  await em.transactional(async (tx) => {
    recordEvent(tx, { type: 'booking.started', resourceKey, resourcePath: `${SMI}/bookings/x`, resource: {} });
    await tx.flush();
    if (fail) throw new Error('rolled back on purpose');
  }).catch((error: Error) => { if (!fail) throw error; });
}

it('committed events arrive once each, in commit order, with the outbox row\'s fields', async () => {
  const write = async (method: string, path: string, body: unknown) => {
    const res = await t.request(method, path, { token: t.token, body });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body;
  };
  await write('POST', `${SMI}/vehicles`, { VIN, deviceID: '356938035643809' });
  const { bookingID } = await write('POST', `${SMI}/bookings`, { VIN, userID: 'live-1', startTimestamp: 1_800_000_000 });
  await write('PUT', `${SMI}/bookings/${bookingID}`, { actualEndTimestamp: 1_800_003_600 });
  const key = `booking:${bookingID}`;
  const events = await arrived(key, 2);
  const rows = await outbox(key);
  expect(events).toEqual(rows.map((row) => ({
    source: 'booking', seq: Number(row.seq), eventId: row.event_id, orgId: 'org-a', type: row.type, resourceKey: key,
    occurredAt: new Date(row.occurred_at).toISOString(),
  })));
  expect(events.map((e) => e.type)).toEqual(['booking.started', 'booking.ended']);
  await commitEvent('booking:marker-1');
  await arrived('booking:marker-1', 1);
  expect(received.filter((e) => e.resourceKey === key)).toHaveLength(2);
});

it('a rolled-back event never arrives: the event committed after it does, alone', async () => {
  await commitEvent('booking:rolled-back', true);
  await commitEvent('booking:after-rollback');
  await arrived('booking:after-rollback', 1);
  expect(await outbox('booking:rolled-back')).toEqual([]);
  expect(received.filter((e) => e.resourceKey === 'booking:rolled-back')).toEqual([]);
});

describe.runIf(process.env.DATABASE_URL)('on PostgreSQL', () => {
  const sql = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => {
    const client = new pg.Client({ connectionString: t.config.DATABASE_URL });
    await client.connect();
    try {
      return (await client.query(text, params)).rows as T[];
    } finally {
      await client.end();
    }
  };
  /** What another process does: a commit on a connection of its own, not through this process's ORM. */
  const insertElsewhere = (resourceKey: string) => sql(`insert into "booking"."webhook_outbox" (event_id, org_id, type, resource_key, resource_path, resource, occurred_at)
    values (gen_random_uuid(), 'org-b', 'booking.ended', $1, '/x', '{}', now())`, [resourceKey]);

  it('an event committed on another connection reaches every LiveEvents started separately, once each', async () => {
    const second: LiveEvent[] = [];
    const other = await startLiveEvents({ databaseUrls: databaseUrls(t.config), log });
    other.subscribe((event) => second.push(event));
    try {
      await insertElsewhere('booking:elsewhere');
      await commitEvent('booking:this-process');
      for (const from of [received, second]) {
        await arrived('booking:this-process', 1, from);
        const ours = from.filter((e) => e.resourceKey === 'booking:elsewhere' || e.resourceKey === 'booking:this-process');
        expect(ours.map((e) => [e.resourceKey, e.orgId])).toEqual([['booking:elsewhere', 'org-b'], ['booking:this-process', 'org-a']]);
      }
    } finally {
      await other.close();
    }
  });

  it('a LISTEN connection that is dropped reconnects, says so once, and delivers what commits afterwards', async () => {
    const listening = () => sql<{ pid: number }>(`select pid from pg_stat_activity
      where application_name = $1 and datname = current_database() and query ilike 'listen%'`, [LIVE_EVENTS_APPLICATION]);
    // This test's LiveEvents and the gateway's own (gateway/subscriptions) listen on this database.
    const before = (await listening()).map((r) => r.pid);
    expect(before.length).toBeGreaterThanOrEqual(1);
    for (const pid of before) await sql('select pg_terminate_backend($1)', [pid]);
    // Every one of them must be back: a NOTIFY sent while this test's own is still reconnecting is not replayed.
    await waitFor(async () => (await listening()).filter((r) => !before.includes(r.pid)).length >= before.length, 20_000, 'new LISTEN connections');
    await commitEvent('booking:after-reconnect');
    await arrived('booking:after-reconnect', 1);
    expect(logged.filter((line) => line.msg.includes('LISTEN connection was lost'))).toHaveLength(1);
  });

  it('a LISTEN connection that stops answering (a link dropped silently) is replaced', async () => {
    const target = new URL(t.config.DATABASE_URL as string);
    const proxy = await tcpProxy(target.hostname, Number(target.port || 5432));
    const through = new URL(target);
    through.host = `127.0.0.1:${proxy.port}`;
    const seen: LiveEvent[] = [];
    const lines: { msg: string }[] = [];
    const frozen = await startLiveEvents({ databaseUrls: [through.toString()], heartbeatMs: 500, log: pino({ level: 'info' }, { write: (line: string) => { lines.push(JSON.parse(line)); } }) });
    frozen.subscribe((event) => seen.push(event));
    try {
      await commitEvent('booking:before-freeze');
      await arrived('booking:before-freeze', 1, seen);
      proxy.freeze();
      await waitFor(() => lines.some((line) => line.msg.includes('listening again')), 30_000, 'a new LISTEN connection');
      await commitEvent('booking:after-freeze');
      await arrived('booking:after-freeze', 1, seen);
      expect(lines.some((line) => line.msg.includes('LISTEN connection was lost'))).toBe(true);
    } finally {
      await frozen.close();
      await proxy.close();
    }
  });
});
