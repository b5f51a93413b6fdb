/**
 * The areas' relays, through a nats-server of the test's own, on PGlite or (DATABASE_URL) PostgreSQL:
 * committed outbox rows reach a durable consumer in outbox order per area and commit order per resource;
 * rolled-back ones never; while NATS is down writes go on and events wait in the outbox, then all arrive
 * in order; a relay that published and did not delete publishes again, and an idempotent consumer
 * handles each event once; an idle relay on PostgreSQL polls with one statement, no transaction or lock.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CommittedEvent, EventBus } from '../../subgraphs/platform/events/bus.ts';
import { openEventBus } from '../../subgraphs/platform/events/open.ts';
import { relayLockKey } from '../../subgraphs/platform/events/relay.ts';
import { recordEvent } from '../../subgraphs/platform/webhooks/outbox.ts';
import { TENANT_FILTER } from '../../subgraphs/platform/db/tenant.ts';
import { runner } from '../../subgraphs/platform/db/run.ts';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';
import { startNatsServer, type NatsServer } from '../support/nats-server.ts';
import { waitFor } from '../webhooks/receiver.ts';

const AREAS = ['booking', 'scoring'] as const;
type Area = (typeof AREAS)[number];
const TYPE: Record<Area, CommittedEvent['type']> = { booking: 'booking.started', scoring: 'user.updated' };

let nats: NatsServer;
let t: TestStack;
/** Every delivery the durable consumer got, duplicates included, and the events it handled once each (by id). */
const deliveries: CommittedEvent[] = [];
const handled = new Map<string, CommittedEvent>();
const live: CommittedEvent[] = [];

beforeAll(async () => {
  nats = await startNatsServer();
  t = await startTestStack({ subgraphs: [...AREAS], env: { NATS_URL: nats.url, EVENTS_RELAY_POLL_MS: '100' } });
  await t.stack.bus.consume('relay-test', async (event) => {
    deliveries.push(event);
    if (!handled.has(event.eventId)) handled.set(event.eventId, event);
  });
  t.stack.bus.live((event) => live.push(event));
}, 300_000);
afterAll(async () => {
  await t?.close();
  await nats?.close();
});

const db = (area: Area) => t.stack.subgraphs.find((s) => s.name === area)!.db;
const outboxRows = (area: Area, resourceKey?: string) => runner(db(area))(
  `select seq, event_id, org_id, type, resource_key, resource_path, resource, occurred_at from "${area}"."webhook_outbox"
    ${resourceKey ? 'where resource_key = ?' : ''} order by seq`, resourceKey ? [resourceKey] : []);

/** Records an event on an area's outbox in a transaction of its own, which `fail` rolls back. */
async function commitEvent(area: Area, resourceKey: string, fail = false) {
  const em = db(area).orm.em.fork();
  em.setFilterParams(TENANT_FILTER, { orgId: DEFAULT_CLIENT.org });
  await em.transactional(async (tx) => {
    recordEvent(tx, { type: TYPE[area], resourceKey, resourcePath: `/x/${resourceKey}`, resource: { key: resourceKey } });
    await tx.flush();
    if (fail) throw new Error('rolled back on purpose');
  }).catch((error: Error) => { if (!fail) throw error; });
}

const handledOf = (keys: string[]) => [...handled.values()].filter((e) => keys.includes(e.resourceKey));
const arrived = (keys: string[], count: number) =>
  waitFor(() => { const found = handledOf(keys); return found.length >= count ? found : undefined; }, 20_000, `${count} events of ${keys.join(', ')}`);

/** Asserts outbox order per area (seq rising) and commit order per resource (`n` rising) among `events`. */
function expectOrdered(events: CommittedEvent[]) {
  for (const area of AREAS) {
    const seqs = events.filter((e) => e.source === area).map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  }
  const byKey = Map.groupBy(events, (e) => e.resourceKey);
  for (const [key, list] of byKey) expect(list.map((e) => e.resource.n), key).toEqual(list.map((_, i) => i));
}

/** The booking relay at rest: its outbox empty, then one statement a poll, no transaction, no lock. */
async function expectIdle() {
  await waitFor(async () => (await outboxRows('booking')).length === 0 || undefined, 10_000, 'outbox emptied');
  const connection = db('booking').orm.em.getConnection();
  const execute = vi.spyOn(connection, 'execute');
  const begin = vi.spyOn(connection, 'begin');
  try {
    // Five polls (EVENTS_RELAY_POLL_MS 100).
    await new Promise((r) => setTimeout(r, 550));
    const statements = execute.mock.calls.map(([sql]) => String(sql));
    expect(statements.filter((sql) => sql.includes('"booking"."webhook_outbox"')).length).toBeGreaterThanOrEqual(3);
    expect(statements.filter((sql) => sql.includes('advisory'))).toEqual([]);
    expect(begin).not.toHaveBeenCalled();
  } finally {
    execute.mockRestore();
    begin.mockRestore();
  }
}

it('committed events reach the consumer in outbox order per area and commit order per resource, with the outbox row whole', async () => {
  const run = randomUUID().slice(0, 8);
  const keys = AREAS.flatMap((area) => [0, 1, 2].map((r) => `${area}:${run}-${r}`));
  // Concurrent writers, each resource written in order by one of them.
  await Promise.all(keys.map(async (key) => {
    const area = key.split(':')[0] as Area;
    for (let n = 0; n < 5; n++) {
      const em = db(area).orm.em.fork();
      em.setFilterParams(TENANT_FILTER, { orgId: DEFAULT_CLIENT.org });
      await em.transactional(async (tx) => {
        recordEvent(tx, { type: TYPE[area], resourceKey: key, resourcePath: `/x/${key}`, resource: { n } });
        await tx.flush();
      });
    }
  }));
  const events = await arrived(keys, 30);
  expect(events).toHaveLength(30);
  expectOrdered(events);
  const first = events.find((e) => e.source === 'booking')!;
  expect(first).toMatchObject({ source: 'booking', orgId: DEFAULT_CLIENT.org, type: 'booking.started', resourcePath: `/x/${first.resourceKey}` });
  expect(new Date(first.occurredAt).toISOString()).toBe(first.occurredAt);
  await waitFor(() => keys.every((key) => live.some((e) => e.resourceKey === key)) || undefined, 10_000, 'live events');
  for (const area of AREAS) await waitFor(async () => (await outboxRows(area)).length === 0 || undefined, 10_000, `${area} outbox emptied`);
});

it('a rolled-back event is never published: the event committed after it is, alone', async () => {
  const key = `booking:rollback-${randomUUID()}`;
  await commitEvent('booking', key, true);
  const after = `booking:after-${randomUUID()}`;
  await commitEvent('booking', after);
  await arrived([after], 1);
  expect(await outboxRows('booking', key)).toEqual([]);
  expect(deliveries.filter((e) => e.resourceKey === key)).toEqual([]);
  expect(live.filter((e) => e.resourceKey === key)).toEqual([]);
});

it('with NATS down, writes are acknowledged and their events wait in the outbox; all arrive in order once it is back', async () => {
  await nats.stop();
  const run = randomUUID().slice(0, 8);
  const keys = AREAS.map((area) => `${area}:outage-${run}`);
  try {
    for (let n = 0; n < 10; n++) {
      for (const key of keys) {
        const area = key.split(':')[0] as Area;
        const em = db(area).orm.em.fork();
        em.setFilterParams(TENANT_FILTER, { orgId: DEFAULT_CLIENT.org });
        await em.transactional(async (tx) => {
          recordEvent(tx, { type: TYPE[area], resourceKey: key, resourcePath: `/x/${key}`, resource: { n } });
          await tx.flush();
        });
      }
    }
    for (const area of AREAS) expect(await outboxRows(area, `${area}:outage-${run}`)).toHaveLength(10);
    expect(handledOf(keys)).toEqual([]);
  } finally {
    await nats.start();
  }
  const events = await arrived(keys, 20);
  expect(events).toHaveLength(20);
  expectOrdered(events);
  for (const area of AREAS) await waitFor(async () => (await outboxRows(area)).length === 0 || undefined, 10_000, `${area} outbox emptied`);
}, 90_000);

describe('a relay that published and stopped before deleting', () => {
  let shortWindow: EventBus;
  beforeAll(async () => {
    // The stream's de-duplication window, shortened for the whole stream (the stack's bus set the default).
    shortWindow = await openEventBus({ natsUrl: nats.url, retentionHours: 72, log: pino({ level: 'silent' }), duplicateWindowMs: 500 });
  });
  afterAll(async () => {
    await shortWindow?.close();
  });

  /**
   * Puts published rows back in the outbox, as they were before the relay's delete, one after the
   * other: rows committed at once could become visible in any order, and the relay publishes a row
   * below its position as soon as it sees it.
   */
  const putBack = async (rows: Record<string, unknown>[]) => {
    for (const row of rows) {
      await runner(db('booking'))(
        `insert into "booking"."webhook_outbox" (seq, event_id, org_id, type, resource_key, resource_path, resource, occurred_at)
          values (?, ?, ?, ?, ?, ?, ?::jsonb, ?)`,
        [row.seq, row.event_id, row.org_id, row.type, row.resource_key, row.resource_path, JSON.stringify(row.resource), row.occurred_at]);
    }
  };

  it('publishes them again after the de-duplication window; the idempotent consumer and live listeners see each event once', async () => {
    const key = `booking:republished-${randomUUID()}`;
    // Rows as they are before the relay takes them: committed with the relay held back by its lock on PostgreSQL,
    // on PGlite read back from the events.
    for (let n = 0; n < 3; n++) await commitEvent('booking', key);
    const events = await arrived([key], 3);
    const rows = events.map((e) => ({
      seq: e.seq, event_id: e.eventId, org_id: e.orgId, type: e.type, resource_key: e.resourceKey, resource_path: e.resourcePath,
      resource: e.resource, occurred_at: e.occurredAt,
    }));
    await new Promise((r) => setTimeout(r, 700));
    await putBack(rows);
    await waitFor(() => deliveries.filter((e) => e.resourceKey === key).length >= 6 || undefined, 20_000, 'the events published again');
    await waitFor(async () => (await outboxRows('booking', key)).length === 0 || undefined, 10_000, 'outbox emptied');
    expect(deliveries.filter((e) => e.resourceKey === key).map((e) => e.eventId)).toEqual([...rows, ...rows].map((r) => r.event_id));
    expect(handledOf([key]).map((e) => e.eventId)).toEqual(rows.map((r) => r.event_id));
    expect(live.filter((e) => e.resourceKey === key).map((e) => e.eventId)).toEqual(rows.map((r) => r.event_id));
  });

  it('within the window the stream does not store them again', async () => {
    await shortWindow.close();
    // Back to a long window.
    shortWindow = await openEventBus({ natsUrl: nats.url, retentionHours: 72, log: pino({ level: 'silent' }), duplicateWindowMs: 60_000 });
    const key = `booking:within-${randomUUID()}`;
    await commitEvent('booking', key);
    const [event] = await arrived([key], 1);
    await putBack([{
      seq: event!.seq, event_id: event!.eventId, org_id: event!.orgId, type: event!.type, resource_key: key,
      resource_path: event!.resourcePath, resource: event!.resource, occurred_at: event!.occurredAt,
    }]);
    await waitFor(async () => (await outboxRows('booking', key)).length === 0 || undefined, 10_000, 'outbox emptied');
    // A marker committed after it arrives after anything the put-back row could have caused.
    const marker = `booking:marker-${randomUUID()}`;
    await commitEvent('booking', marker);
    await arrived([marker], 1);
    expect(deliveries.filter((e) => e.resourceKey === key)).toHaveLength(1);
  });
});

describe.runIf(process.env.DATABASE_URL)('on PostgreSQL', () => {
  it('a gap filled by its late row: both go out in seq order, then the relay is idle again', async () => {
    const [late, early] = [`booking:late-${randomUUID()}`, `booking:early-${randomUUID()}`];
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let flushed!: () => void;
    const inserted = new Promise<void>((resolve) => { flushed = resolve; });
    const em = db('booking').orm.em.fork();
    em.setFilterParams(TENANT_FILTER, { orgId: DEFAULT_CLIENT.org });
    // The late row takes its seq first and commits last: a gap below the early row meanwhile.
    const committed = em.transactional(async (tx) => {
      recordEvent(tx, { type: TYPE.booking, resourceKey: late, resourcePath: `/x/${late}`, resource: { n: 0 } });
      await tx.flush();
      flushed();
      await held;
    });
    await inserted;
    await commitEvent('booking', early);
    await new Promise((r) => setTimeout(r, 300));
    expect(handledOf([early])).toEqual([]);
    release();
    await committed;
    const events = await arrived([late, early], 2);
    expect(events.map((e) => e.resourceKey)).toEqual([late, early]);
    expect(events[0]!.seq).toBeLessThan(events[1]!.seq);
    await expectIdle();
  });

  it('one relay per area at a time: while another session holds the area\'s lock, its events wait in the outbox', async () => {
    const client = new pg.Client({ connectionString: t.config.DATABASE_URL });
    await client.connect();
    const key = `booking:locked-${randomUUID()}`;
    try {
      await client.query('select pg_advisory_lock($1)', [relayLockKey('booking')]);
      await commitEvent('booking', key);
      await new Promise((r) => setTimeout(r, 500));
      expect(await outboxRows('booking', key)).toHaveLength(1);
      expect(handledOf([key])).toEqual([]);
      await client.query('select pg_advisory_unlock($1)', [relayLockKey('booking')]);
      await arrived([key], 1);
    } finally {
      await client.end();
    }
  });

  it('an idle relay looks at its outbox with one statement a poll: no transaction, no lock', async () => {
    await expectIdle();
  });
});
