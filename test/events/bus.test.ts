/**
 * The event bus through a nats-server of the test's own (JetStream), and in-process: stream order,
 * durable consumers shared by processes with redelivery, organisation subjects that never match
 * another organisation's events, and live events across a NATS restart.
 */
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { connect } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommittedEvent, EventBus } from '../../subgraphs/platform/events/bus.ts';
import { openEventBus } from '../../subgraphs/platform/events/open.ts';
import { EVENTS_STREAM, organisationFilter, subjectOf, subjectToken } from '../../subgraphs/platform/events/subjects.ts';
import { startNatsServer, type NatsServer } from '../support/nats-server.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';
import { waitFor } from '../webhooks/receiver.ts';

const log = pino({ level: 'silent' });
let nats: NatsServer;
const opened: EventBus[] = [];

const open = async (options: { ackWaitMs?: number; natsUrl?: string | null } = {}) => {
  const bus = await openEventBus({ natsUrl: options.natsUrl === null ? undefined : nats.url, retentionHours: 1, log, ackWaitMs: options.ackWaitMs ?? 1_000 });
  opened.push(bus);
  return bus;
};

const event = (fields: Partial<CommittedEvent> = {}): CommittedEvent => ({
  eventId: randomUUID(), source: 'roadside', seq: 1, orgId: 'org-1', type: 'rescue.status_changed',
  resourceKey: 'rescue:1', resourcePath: '/p', resource: { n: 1 }, occurredAt: new Date().toISOString(), ...fields,
});

beforeAll(async () => { nats = await startNatsServer(); }, 60_000);
afterAll(async () => {
  await Promise.all(opened.map((bus) => bus.close()));
  await nats?.close();
});

describe('subjects', () => {
  it('encode every organisation, area and type into one token each', () => {
    expect(subjectToken('a.b')).toBe('a~2Eb');
    expect(subjectToken('*')).toBe('~2A');
    expect(subjectToken('>')).toBe('~3E');
    expect(subjectToken('a b~')).toBe('a~20b~7E');
    expect(subjectToken('')).toBe('~');
    expect(subjectOf({ source: 'roadside', orgId: 'Acme Ltd.', type: 'rescue.status_changed' }))
      .toBe('events.roadside.Acme~20Ltd~2E.rescue~2Estatus_changed');
  });

  it('one organisation\'s filter never matches another organisation\'s events, through the server', async () => {
    const bus = await open();
    const orgs = ['a', 'a.b', '*', '>', 'a b', 'a.*', 'b'];
    const published = orgs.map((orgId) => event({ orgId, eventId: randomUUID() }));
    for (const e of published) await bus.publish(e);
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      const js = jetstream(nc);
      for (const orgId of orgs) {
        const name = `filter-${randomUUID()}`;
        await jsm.consumers.add(EVENTS_STREAM, {
          name, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All, filter_subject: organisationFilter(orgId), inactive_threshold: 60_000_000_000,
        });
        const { num_pending } = await jsm.consumers.info(EVENTS_STREAM, name);
        const mine = published.filter((e) => e.orgId === orgId);
        const messages = await (await js.consumers.get(EVENTS_STREAM, name)).fetch({ max_messages: mine.length, expires: 2_000 });
        const seen: CommittedEvent[] = [];
        for await (const message of messages) seen.push(message.json<CommittedEvent>());
        expect(num_pending, orgId).toBe(mine.length);
        expect(seen.map((e) => e.eventId), orgId).toEqual(mine.map((e) => e.eventId));
      }
    } finally {
      await nc.close();
    }
  });
});

describe('JetStream', () => {
  it('live and durable consumers get every event in publication order; a second publication of an id is not stored again', async () => {
    const bus = await open();
    const live: string[] = [];
    bus.live((e) => live.push(e.eventId));
    const consumed: string[] = [];
    const consumer = await bus.consume(`order-${randomUUID()}`, async (e) => { consumed.push(e.eventId); });
    // The live consumer starts on its first listener.
    await new Promise((r) => setTimeout(r, 300));
    const events = Array.from({ length: 40 }, (_, i) => event({ seq: i + 1, source: i % 2 ? 'booking' : 'roadside' }));
    const mine = new Set(events.map((e) => e.eventId));
    for (const e of events) await bus.publish(e);
    await bus.publish(events[0]!);
    await waitFor(() => consumed.filter((id) => mine.has(id)).length >= 40 || undefined, 10_000, 'durable events');
    await waitFor(() => live.length >= 40 || undefined, 10_000, 'live events');
    expect(live).toEqual(events.map((e) => e.eventId));
    expect(consumed.filter((id) => mine.has(id))).toEqual(events.map((e) => e.eventId));
    await consumer.stop();
  });

  it('a durable consumer shared by two processes handles each event once; a failing handler gets it again', async () => {
    const [one, two] = [await open(), await open()];
    const name = `shared-${randomUUID()}`;
    const handled = new Map<string, number>();
    let failures = 0;
    const handler = async (e: CommittedEvent) => {
      if (e.resource.fail && !failures) {
        failures += 1;
        throw new Error('failing once on purpose');
      }
      handled.set(e.eventId, (handled.get(e.eventId) ?? 0) + 1);
    };
    const consumers = [await one.consume(name, handler), await two.consume(name, handler)];
    const events = Array.from({ length: 30 }, (_, i) => event({ seq: i, resource: { fail: i === 7 } }));
    for (const e of events) await one.publish(e);
    await waitFor(() => events.every((e) => handled.has(e.eventId)) || undefined, 15_000, 'every event handled');
    expect(failures).toBe(1);
    expect(events.map((e) => handled.get(e.eventId))).toEqual(events.map(() => 1));
    await Promise.all(consumers.map((c) => c.stop()));
  });

  it('an event whose process died before acknowledging it comes again to another after the ack wait', async () => {
    const name = `crash-${randomUUID()}`;
    const survivor = await open();
    const e = event();
    // A process that takes the event from the durable consumer and dies without acknowledging it.
    const nc = await connect({ servers: nats.url });
    await (await jetstreamManager(nc)).consumers.add(EVENTS_STREAM, {
      durable_name: name, ack_policy: AckPolicy.Explicit, ack_wait: 1_000_000_000, deliver_policy: DeliverPolicy.New,
    });
    await survivor.publish(e);
    const taken = await (await jetstream(nc).consumers.get(EVENTS_STREAM, name)).next({ expires: 5_000 });
    expect(taken?.json<CommittedEvent>().eventId).toBe(e.eventId);
    await nc.close();
    const got: string[] = [];
    await survivor.consume(name, async (x) => { got.push(x.eventId); });
    await waitFor(() => got.includes(e.eventId) || undefined, 10_000, 'redelivered event');
    expect(got).toEqual([e.eventId]);
  });

  it('a process whose connection was cut gets, once reconnected, the events the stream stored meanwhile, in order', async () => {
    const proxy = await tcpProxy('127.0.0.1', nats.port);
    try {
      const cutOff = await open({ natsUrl: `nats://127.0.0.1:${proxy.port}` });
      const publisher = await open();
      const live: string[] = [];
      cutOff.live((e) => live.push(e.eventId));
      await new Promise((r) => setTimeout(r, 300));
      const before = event();
      await publisher.publish(before);
      await waitFor(() => live.includes(before.eventId) || undefined, 10_000, 'event before the cut');
      proxy.cut();
      const meanwhile = Array.from({ length: 5 }, (_, i) => event({ seq: i }));
      for (const e of meanwhile) await publisher.publish(e);
      proxy.restore();
      await waitFor(() => meanwhile.every((e) => live.includes(e.eventId)) || undefined, 30_000, 'the events published during the cut');
      expect(live).toEqual([before, ...meanwhile].map((e) => e.eventId));
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('live events go on after nats-server restarts; publish fails while it is down', async () => {
    const bus = await open();
    const live: string[] = [];
    bus.live((e) => live.push(e.eventId));
    await new Promise((r) => setTimeout(r, 300));
    const before = event();
    await bus.publish(before);
    await waitFor(() => live.includes(before.eventId) || undefined, 10_000, 'event before the restart');
    await nats.stop();
    await expect(bus.publish(event())).rejects.toThrow();
    await nats.start();
    const after = event();
    await waitFor(async () => bus.publish(after).then(() => true, () => undefined), 20_000, 'publish after the restart');
    await waitFor(() => live.includes(after.eventId) || undefined, 20_000, 'live event after the restart');
  }, 60_000);
});

describe('in-process', () => {
  it('publish resolves once every durable consumer handled the event, after retrying a failing handler', async () => {
    const bus = await open({ natsUrl: null, ackWaitMs: 50 });
    const handled: string[] = [];
    let fail = true;
    await bus.consume('history', async (e) => {
      if (fail) { fail = false; throw new Error('failing once on purpose'); }
      handled.push(e.eventId);
    });
    const live: string[] = [];
    bus.live((e) => live.push(e.eventId));
    const e = event();
    await bus.publish(e);
    expect(handled).toEqual([e.eventId]);
    // Published again (a relay that stopped before deleting its row): live listeners see it once.
    await bus.publish(e);
    expect(live).toEqual([e.eventId]);
  });

  it('publish rejects when the consumer stops before handling the event, so the row stays in its outbox', async () => {
    const bus = await open({ natsUrl: null, ackWaitMs: 50 });
    const consumer = await bus.consume('deliveries', () => Promise.reject(new Error('down')));
    const published = bus.publish(event());
    await new Promise((r) => setTimeout(r, 120));
    await consumer.stop();
    await expect(published).rejects.toThrow(/stopped before event/);
  });
});
