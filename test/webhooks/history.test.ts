/**
 * The event history through the whole path: REST writes of every area record their events in their
 * outboxes, the relays publish them on the bus, and the webhooks subgraph's `history` consumer keeps
 * each once, the same event a subscriber receives; an event that comes again changes nothing.
 * PGlite with the in-process bus, or PostgreSQL (DATABASE_URL) with NATS JetStream on a nats-server
 * of the test's own.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CommittedEvent } from '../../subgraphs/platform/events/bus.ts';
import type { Run } from '../../subgraphs/platform/db/run.ts';
import { EVENT_TYPES } from '../../subgraphs/events.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { sourceAFull } from '../scoring/mvr-fixtures.ts';
import { dispatch, provision, RS, session, status } from '../roadside/helpers.ts';
import { testBus } from './bus-env.ts';
import { startReceiver, waitFor, type Received } from './receiver.ts';

const WH = '/platform/webhooks/v1';
const SMI = '/shared-mobility-insights/v2';
const REG = '/registration/v2';

let t: TestStack;
let bus: Awaited<ReturnType<typeof testBus>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  bus = await testBus();
  t = await startTestStack({
    subgraphs: ['booking', 'scoring', 'registration', 'roadside', 'webhooks'],
    env: { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', ...bus.env },
  });
  receiver = await startReceiver();
}, 300_000);
afterAll(async () => {
  await receiver?.close();
  await t?.close();
  await bus?.close();
});

const webhooksDb = () => t.stack.subgraphs.find((s) => s.name === 'webhooks')!.db;
const sql: Run = (text, params = []) => webhooksDb().orm.em.getConnection().execute(text, params, 'all');
const history = async (orgId: string): Promise<CommittedEvent[]> => (await sql(`select * from "webhooks"."events" where org_id = ? order by source, seq`, [orgId]))
  .map((r) => ({
    eventId: String(r.id), source: String(r.source), seq: Number(r.seq), orgId: String(r.org_id), type: r.type as CommittedEvent['type'],
    resourceKey: String(r.resource_key), resourcePath: String(r.resource_path),
    resource: (typeof r.resource === 'string' ? JSON.parse(r.resource) : r.resource) as Record<string, unknown>,
    occurredAt: new Date(r.occurred_at as string).toISOString(),
  }));

async function ok(method: string, path: string, body?: unknown, headers?: Record<string, string>) {
  const res = await t.request(method, path, { token: t.token, body, headers });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

/** One write of each kind, so that every event type of the catalogue is recorded at least once. */
async function everyEventType() {
  const member = await provision(t, t.token);
  const rescue = (await dispatch(t, t.token, await session(t, t.token, [{ key: 'vin', value: member.vin }]))).body.requestId as string;
  expect((await status(t, t.token, rescue, 'EN-ROUTE')).status).toBe(200);
  expect((await status(t, t.token, rescue, 'EN-ROUTE', { updatedETA: 40 })).status).toBe(200);
  await ok('POST', `${RS}/rescue/reqId/${rescue}/cancel`, { reason: 'changed plans' });

  await ok('POST', `${SMI}/vehicles`, { VIN: '1HGCM82633A004352', deviceID: '356938035643809' });
  const { bookingID } = await ok('POST', `${SMI}/bookings`, { VIN: '1HGCM82633A004352', userID: 'driver-h', startTimestamp: 1_800_000_000 });
  await ok('PUT', `${SMI}/bookings/${bookingID}`, { actualEndTimestamp: 1_800_003_600 });

  await ok('POST', `${REG}/users`, { userId: 'reg-h' });
  await ok('PUT', `${REG}/devices/dev-h/users/reg-h`, { effectiveDate: '2026-01-01', type: 'mobile' });
  await ok('PUT', `${REG}/devices/dev-h/status`, { status: 'Inactive' });
  await ok('POST', `${REG}/consents`, { userId: 'reg-h', type: 'location-tracking', version: '1', granted: true, timestamp: '2026-01-01T00:00:00Z', source: 'app' });

  await ok('POST', `${SMI}/users`, { userId: 'user-h', dateOfBirth: '1969-07-21', homeZip: '60601' });
  await ok('PATCH', `${SMI}/users/user-h`, { homeZip: '60602' });
  await ok('POST', `${SMI}/users/user-h/sourcea-mvr`, JSON.stringify(sourceAFull()), { 'content-type': 'application/json' });
  return rescue;
}

it('records every event of every type once, as the subscribers receive it, and nothing again when an event comes again', async () => {
  const sub = await ok('POST', `${WH}/subscriptions`, { url: `${receiver.url}/all`, eventTypes: [...EVENT_TYPES] });
  const rescue = await everyEventType();

  const recorded = await waitFor(async () => {
    const rows = await history(t.org);
    return EVENT_TYPES.every((type) => rows.some((r) => r.type === type)) ? rows : null;
  }, 15_000, 'an event of every type in the history');
  const received = await waitFor(() => (receiver.received.length >= recorded.length ? receiver.received : null), 15_000, 'every event at the receiver');
  // The history holds exactly the events the subscriber got, each once, with the same fields.
  expect(new Set(recorded.map((e) => e.eventId)).size).toBe(recorded.length);
  const body = (e: CommittedEvent) => ({ id: e.eventId, type: e.type, timestamp: e.occurredAt, data: { path: e.resourcePath, resource: e.resource } });
  const byId = new Map(received.map((r: Received) => [r.json.id as string, r]));
  expect(byId.size).toBe(recorded.length);
  for (const event of recorded) {
    const hit = byId.get(event.eventId);
    expect(hit, event.type).toBeDefined();
    expect(receiver.verify(sub.secret, hit!)).toEqual(body(event));
    expect(event.orgId).toBe(t.org);
  }
  expect(recorded.find((e) => e.type === 'mvr.created')).toMatchObject({ source: 'scoring', resourceKey: 'user:user-h' });
  // A resource's events in seq order are its changes in commit order.
  expect(recorded.filter((e) => e.resourceKey === `rescue:${rescue}`).map((e) => [e.type, e.resource.status])).toEqual([
    ['rescue.status_changed', 'EN-ROUTE'], ['rescue.updated', 'EN-ROUTE'], ['rescue.status_changed', 'CANCELLED'], ['rescue.cancelled', 'CANCELLED'],
  ]);

  // Every event published again (a relay that crashed before deleting its outbox rows): nothing new anywhere.
  const deliveries = async () => Number((await sql('select count(*) as n from "webhooks"."webhook_deliveries" where org_id = ?', [t.org]))[0].n);
  const before = await deliveries();
  expect(before).toBe(recorded.length);
  for (const event of recorded) await t.stack.bus.publish(event);
  await new Promise((r) => setTimeout(r, 500));
  expect(await history(t.org)).toEqual(recorded);
  expect(await deliveries()).toBe(before);
  expect(receiver.received).toHaveLength(recorded.length);
}, 120_000);
