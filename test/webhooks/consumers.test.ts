/**
 * The webhooks subgraph's worker on the event bus, from the published event on (the relays and the
 * REST writes are the other tests'): on the in-process bus, and on NATS JetStream (a nats-server of
 * the test's own) with two workers, as two processes would, sharing the durable consumers on one
 * database. Each event is recorded once and delivered, signed, once per matching subscription.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../subgraphs/platform/config.ts';
import { openDatabase, type Database } from '../../subgraphs/platform/db/orm.ts';
import type { CommittedEvent, EventBus } from '../../subgraphs/platform/events/bus.ts';
import { openEventBus } from '../../subgraphs/platform/events/open.ts';
import type { Worker } from '../../subgraphs/platform/subgraph.ts';
import type { Run } from '../../subgraphs/platform/db/run.ts';
import { newSecret } from '../../subgraphs/webhooks/service.ts';
import { webhooks } from '../../subgraphs/webhooks/index.ts';
import { startDeliveryWorker } from '../../subgraphs/webhooks/worker.ts';
import { testDatabase } from '../support/database.ts';
import { startNatsServer, type NatsServer } from '../support/nats-server.ts';
import { startReceiver, waitFor } from './receiver.ts';

const log = pino({ level: 'silent' });
let folder: string;
let config: Config;
let db: Database;
let drop: () => Promise<void>;
let nats: NatsServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const closing: (() => Promise<void>)[] = [];

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'frg-consumers-'));
  const database = await testDatabase(process.env.DATABASE_URL, 'consumers');
  drop = database.drop;
  config = loadConfig({
    ...process.env, LOG_LEVEL: 'warn', DATABASE_URL: undefined, ...database.env, DATA_DIR: folder,
    WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_INTERVAL_MS: '5000',
  });
  db = await openDatabase(config, { name: webhooks.name, entities: webhooks.entities, migrationsPath: webhooks.migrationsPath });
  nats = await startNatsServer();
  receiver = await startReceiver();
}, 120_000);
afterAll(async () => {
  for (const close of closing.reverse()) await close();
  await receiver?.close();
  await nats?.close();
  await db?.close();
  await drop?.();
  await rm(folder, { recursive: true, force: true });
});

const sql: Run = (text, params = []) => db.orm.em.getConnection().execute(text, params, 'all');

async function subscribe(orgId: string, path: string, eventTypes: string[]) {
  const secret = newSecret();
  await sql(`insert into "webhooks"."webhook_subscriptions" (id, org_id, url, event_types, secret, created_at) values (?, ?, ?, ?::jsonb, ?, now())`,
    [crypto.randomUUID(), orgId, `${receiver.url}${path}`, JSON.stringify(eventTypes), secret]);
  return secret;
}

/**
 * A worker as a process that runs the webhooks subgraph starts it, on a bus of its own; `handled`
 * counts the events its durable consumers' handlers took, by consumer.
 */
async function worker(natsUrl?: string): Promise<{ bus: EventBus; worker: Worker; handled: Record<string, number> }> {
  const bus = await openEventBus({ natsUrl, retentionHours: 1, log, ackWaitMs: 2_000 });
  const handled: Record<string, number> = {};
  const counted: EventBus = {
    ...bus,
    consume: (name, handler) => bus.consume(name, async (e) => {
      await handler(e);
      handled[name] = (handled[name] ?? 0) + 1;
    }),
  };
  const started = startDeliveryWorker({ db, config, log, peers: {}, bus: counted });
  closing.push(async () => { await started.stop(); await bus.close(); });
  return { bus, worker: started, handled };
}

let seq = 0;
const event = (orgId: string, resourceKey: string, type: CommittedEvent['type'] = 'consent.changed'): CommittedEvent => ({
  eventId: crypto.randomUUID(), source: 'registration', seq: (seq += 1), orgId, type, resourceKey,
  resourcePath: `/registration/v2/consents/${resourceKey}`, resource: { userId: resourceKey, n: seq }, occurredAt: new Date().toISOString(),
});
const recorded = async (orgId: string) => (await sql('select id from "webhooks"."events" where org_id = ? order by seq', [orgId])).map((r) => r.id);
const arrived = (path: string) => receiver.received.filter((r) => r.path === path);

describe('on the in-process bus', () => {
  it('records each event and sends it, signed, to each matching subscription at once, once', async () => {
    const secret = await subscribe('org-local', '/local', ['consent.changed']);
    await subscribe('org-local', '/local-devices', ['device.status_changed']);
    const { bus } = await worker();
    const events = [event('org-local', 'u1'), event('org-local', 'u2'), event('org-local', 'u1')];
    for (const e of events) await bus.publish(e);
    // publish() resolves once both consumers have handled the event: recorded, and its delivery enqueued.
    expect(await recorded('org-local')).toEqual(events.map((e) => e.eventId));
    // Claimed at once in this process, not at the next poll (5 s here).
    const hits = await waitFor(() => (arrived('/local').length >= 3 ? arrived('/local') : null), 3_000, 'three deliveries');
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    expect(hits.map((h) => receiver.verify(secret, h) as { id: string }).sort(byId)).toEqual(events.map((e) => ({
      id: e.eventId, type: e.type, timestamp: e.occurredAt, data: { path: e.resourcePath, resource: e.resource },
    })).sort(byId));
    // Two events of one resource arrive in their order.
    expect(hits.filter((h) => h.json.data.resource.userId === 'u1').map((h) => h.json.id)).toEqual([events[0].eventId, events[2].eventId]);
    // The same events again: nothing new.
    for (const e of events) await bus.publish(e);
    expect(await recorded('org-local')).toEqual(events.map((e) => e.eventId));
    await new Promise((r) => setTimeout(r, 300));
    expect(arrived('/local')).toHaveLength(3);
    expect(arrived('/local-devices')).toEqual([]);
  });
});

describe('on NATS JetStream', () => {
  it('two workers share the durable consumers: every event recorded once and delivered once per subscription', async () => {
    const secrets = [await subscribe('org-nats', '/nats-a', ['consent.changed']), await subscribe('org-nats', '/nats-b', ['consent.changed', 'device.status_changed'])];
    const first = await worker(nats.url);
    const second = await worker(nats.url);
    const events = Array.from({ length: 40 }, (_, i) => event('org-nats', `u${i % 7}`, i % 4 ? 'consent.changed' : 'device.status_changed'));
    for (const [i, e] of events.entries()) await (i % 2 ? first : second).bus.publish(e);
    const consents = events.filter((e) => e.type === 'consent.changed');
    await waitFor(async () => (await recorded('org-nats')).length === events.length, 15_000, 'every event in the history');
    await waitFor(() => arrived('/nats-a').length >= consents.length && arrived('/nats-b').length >= events.length, 15_000, 'every delivery');
    await new Promise((r) => setTimeout(r, 1_000));
    expect((await recorded('org-nats')).sort()).toEqual(events.map((e) => e.eventId).sort());
    expect(arrived('/nats-a').map((h) => h.json.id).sort()).toEqual(consents.map((e) => e.eventId).sort());
    expect(arrived('/nats-b').map((h) => h.json.id).sort()).toEqual(events.map((e) => e.eventId).sort());
    for (const hit of arrived('/nats-a')) expect(receiver.verify(secrets[0], hit)).toBeTruthy();
    for (const hit of arrived('/nats-b')) expect(receiver.verify(secrets[1], hit)).toBeTruthy();
    const rows = await sql('select count(*) as n from "webhooks"."webhook_deliveries" where org_id = ?', ['org-nats']);
    expect(Number(rows[0].n)).toBe(consents.length + events.length);
    // Each consumer's events went to one worker or the other: both took part, and none was handled twice.
    for (const name of ['history', 'webhooks']) {
      expect(first.handled[name], name).toBeGreaterThan(0);
      expect(second.handled[name], name).toBeGreaterThan(0);
      expect(first.handled[name]! + second.handled[name]!, name).toBe(events.length);
    }
  }, 60_000);

  it('two workers keep the order of one resource\'s events', async () => {
    const secret = await subscribe('org-order', '/order', ['consent.changed']);
    const first = await worker(nats.url);
    const second = await worker(nats.url);
    const events = Array.from({ length: 30 }, () => event('org-order', 'one-user'));
    for (const [i, e] of events.entries()) await (i % 2 ? first : second).bus.publish(e);
    const hits = await waitFor(() => (arrived('/order').length >= events.length ? arrived('/order') : null), 20_000, 'every delivery');
    expect(hits.map((h) => h.json.id)).toEqual(events.map((e) => e.eventId));
    for (const hit of hits) expect(receiver.verify(secret, hit)).toBeTruthy();
  }, 60_000);
});
