import type { FormattedExecutionResult } from 'graphql';
import { Counter, Gauge, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { SubscriptionEngine, type EngineOptions, type Holder } from '../../../gateway/subscriptions/engine.ts';
import { LIVE_FIELDS } from '../../../subgraphs/events.ts';
import { EventReplay } from '../../../gateway/subscriptions/replay.ts';
import type { HistoryReader } from '../../../gateway/subscriptions/history-access.ts';
import { memoryClientLimit } from '../../../gateway/subscriptions/client-limit.ts';
import { executionBudget } from '../../../gateway/subscriptions/budget.ts';
import { ExecutionSlots } from '../../../gateway/subscriptions/execution-slots.ts';
import type { PreparedSubscription } from '../../../gateway/subscriptions/document.ts';
import type { Subscriber } from '../../../gateway/subscriptions/auth.ts';
import { unauthenticated } from '../../../subgraphs/platform/errors.ts';
import type { CommittedEvent } from '../../../subgraphs/platform/events/bus.ts';
import type { EventType } from '../../../subgraphs/platform/webhooks/events.ts';

const quiet = { warn() {}, error() {}, info() {} } as unknown as EngineOptions['log'];

/** An engine on a hand-driven event source; `ran` lists the authorization of every query it ran. */
function engineWith(options: Partial<EngineOptions> = {}) {
  const listeners = new Set<(event: CommittedEvent) => void>();
  const ran: string[] = [];
  const registry = new Registry();
  const engine = new SubscriptionEngine({
    live: (listener) => { listeners.add(listener); return () => { listeners.delete(listener); }; },
    execute: async (prepared, { authorization }) => { ran.push(authorization); return { data: { [prepared.responseKey]: { status: 'EN_ROUTE' } } }; },
    auth: { authenticate: async () => { throw new Error('not used'); }, recheck: async () => undefined },
    replay: new EventReplay(undefined),
    clientLimit: memoryClientLimit(10), maxPerClient: 10, maxPerProcess: 10, queueMax: 3, bufferMax: 1000, recheckEveryMs: 60_000,
    budget: executionBudget(600), slots: new ExecutionSlots(2), sharing: true,
    metrics: {
      active: new Gauge({ name: 'a', help: 'a', labelNames: ['transport'], registers: [registry] }),
      pushed: new Counter({ name: 'p', help: 'p', labelNames: ['transport'], registers: [registry] }),
      closed: new Counter({ name: 'c', help: 'c', labelNames: ['reason'], registers: [registry] }),
      executions: new Counter({ name: 'x', help: 'x', registers: [registry] }),
    },
    log: quiet,
    ...options,
  });
  let seq = 0;
  const emit = (orgId: string, resourceKey: string, type: EventType = 'rescue.status_changed') => {
    seq += 1;
    for (const listener of listeners) listener({
      source: 'roadside', seq, eventId: `e${seq}`, orgId, type, resourceKey, resourcePath: '/', resource: {}, occurredAt: new Date().toISOString(),
    });
  };
  return { engine, emit, ran };
}

const subscriber = (orgId: string, clientId = `client-${orgId}`): Subscriber => ({ caller: { clientId, orgId, scopes: ['roadside'] }, authorization: `Bearer ${clientId}`, expiresAt: Date.now() + 3_600_000 });
const prepared = (fieldName: keyof typeof LIVE_FIELDS, id: string): PreparedSubscription => {
  const field = LIVE_FIELDS[fieldName]!;
  return { fieldName, field, resourceKey: `${field.kind}:${id}`, responseKey: fieldName, queryKey: field.query, document: { kind: 'Document', definitions: [] } as never, query: '', variables: {} };
};
function wsHolder(orgId: string, buffered = 0) {
  const closes: [number, string][] = [];
  const holder: Holder = { transport: 'ws', subscriber: subscriber(orgId), close: (code, reason) => closes.push([code, reason]), buffered: () => buffered };
  return { holder, closes };
}
/** Long enough for an event to be charged, wait its turn and run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));
/** The stream's next result, or undefined when none comes while events settle. */
const nextWithin = (stream: AsyncIterator<FormattedExecutionResult>) =>
  Promise.race([stream.next().then((r) => r.value as FormattedExecutionResult), settle().then(() => undefined)]);

/** Event `e<seq>` of rescue r1, organisation org-a, as the history holds it. */
const recorded = (seq: number) => ({
  eventId: `e${seq}`, source: 'roadside', seq, orgId: 'org-a', type: 'rescue.status_changed' as const,
  resourceKey: 'rescue:r1', resourcePath: '/', occurredAt: new Date().toISOString(),
});
/** A history holding the events `seqs`, whose reads wait until `release()`. */
function heldHistory(seqs: number[]) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => { release = resolve; });
  const history: HistoryReader = {
    find: async () => undefined,
    oldest: async () => recorded(1),
    after: async ({ seq }) => { await released; return seqs.filter((n) => n > seq).map(recorded); },
  };
  return { history, release };
}

describe('SubscriptionEngine', () => {
  it("runs an event only for subscribers of the event's organisation, on the watched key, for the field's event types", async () => {
    const { engine, emit, ran } = engineWith();
    const a = wsHolder('org-a');
    const b = wsHolder('org-b');
    const ours = await engine.subscribe(a.holder, prepared('rescueUpdated', 'r1'));
    await engine.subscribe(b.holder, prepared('rescueUpdated', 'r1'));
    await engine.subscribe(a.holder, prepared('coverageScoreChanged', 'u1'));
    emit('org-a', 'rescue:r1');
    emit('org-a', 'rescue:r2');
    emit('org-a', 'user:u1', 'user.updated');
    await settle();
    expect(ran).toEqual(['Bearer client-org-a']);
    const event = { id: 'e1', type: 'rescue.status_changed', occurredAt: expect.any(String) };
    expect(await ours.next()).toEqual({ value: { data: { rescueUpdated: { status: 'EN_ROUTE' } }, extensions: { event } }, done: false });
    await engine.shutdown();
  });

  it('checks a token once per event however many subscriptions present it, and closes every one of them when it fails', async () => {
    const checked: string[] = [];
    let refuse = false;
    const { engine, emit, ran } = engineWith({
      auth: {
        authenticate: async () => { throw new Error('not used'); },
        recheck: async ({ authorization }) => {
          checked.push(authorization);
          if (refuse) throw unauthenticated('The client of this access token is unknown or disabled');
        },
      },
    });
    const holders = [wsHolder('org-a'), wsHolder('org-a'), wsHolder('org-a')];
    for (const { holder } of holders) await engine.subscribe(holder, prepared('rescueUpdated', 'r1'));
    emit('org-a', 'rescue:r1');
    await settle();
    expect(checked).toEqual(['Bearer client-org-a']);
    expect(ran).toHaveLength(1);
    refuse = true;
    emit('org-a', 'rescue:r1');
    await settle();
    expect(checked).toHaveLength(2);
    expect(ran).toHaveLength(1);
    for (const { closes } of holders) expect(closes).toEqual([[4401, expect.stringContaining('Unauthorized')]]);
    await engine.shutdown();
  });

  it('resumed after an event: the history after it, then live events not replayed, each once, in order', async () => {
    // The history holds e1..e3; its read is held until e3 and e4 went live (e4 not recorded yet).
    const { history, release: readHistory } = heldHistory([1, 2, 3]);
    const { engine, emit } = engineWith({ replay: new EventReplay(history), queueMax: 10 });
    emit('org-a', 'rescue:r1');
    emit('org-a', 'rescue:r1');
    const a = wsHolder('org-a');
    const resumed = { ...prepared('rescueUpdated', 'r1'), after: 'e1' };
    const stream = await engine.subscribe(a.holder, resumed, await engine.anchorOf(a.holder.subscriber, resumed));
    emit('org-a', 'rescue:r1');
    emit('org-a', 'rescue:r1');
    readHistory();
    const ids: unknown[] = [];
    for (let i = 0; i < 3; i++) ids.push((await stream.next()).value?.extensions?.event);
    emit('org-a', 'rescue:r1');
    ids.push((await stream.next()).value?.extensions?.event);
    expect(ids.map((e) => (e as { id: string }).id)).toEqual(['e2', 'e3', 'e4', 'e5']);
    await engine.shutdown();
  });

  it('resumed after an event that reaches it live only later (another gateway had it first): neither it, older ones nor those replayed come again', async () => {
    // The history already holds e1..e5; none of them has gone live in this process yet.
    const history: HistoryReader = {
      find: async (_org, id) => recorded(Number(id.slice(1))),
      oldest: async () => recorded(1),
      after: async ({ seq }) => [1, 2, 3, 4, 5].filter((n) => n > seq).map(recorded),
    };
    const { engine, emit } = engineWith({ replay: new EventReplay(history), queueMax: 10 });
    const a = wsHolder('org-a');
    const resumed = { ...prepared('rescueUpdated', 'r1'), after: 'e3' };
    const stream = await engine.subscribe(a.holder, resumed, await engine.anchorOf(a.holder.subscriber, resumed));
    const ids: unknown[] = [];
    for (let i = 0; i < 2; i++) ids.push((await stream.next()).value?.extensions?.event);
    for (let i = 0; i < 6; i++) emit('org-a', 'rescue:r1');
    // Whatever comes until the engine is quiet.
    for (let next = await nextWithin(stream); next; next = await nextWithin(stream)) ids.push(next.extensions?.event);
    expect(ids.map((e) => (e as { id: string }).id)).toEqual(['e4', 'e5', 'e6']);
    await engine.shutdown();
  });

  it('resumed while an event runs live: a replay that runs it too, and ends first, leaves it once', async () => {
    const { history, release: readHistory } = heldHistory([1, 2]);
    let liveRunning!: () => void;
    const liveRuns = new Promise<void>((resolve) => { liveRunning = resolve; });
    let finishLive!: () => void;
    const liveFinished = new Promise<void>((resolve) => { finishLive = resolve; });
    // The first execution (e2, live) waits until the replay has run e2 and ended.
    let executions = 0;
    const execute: EngineOptions['execute'] = async (query) => {
      executions += 1;
      if (executions === 1) {
        liveRunning();
        await liveFinished;
      }
      return { data: { [query.responseKey]: { status: 'EN_ROUTE' } } };
    };
    const { engine, emit } = engineWith({ replay: new EventReplay(history), execute, queueMax: 10 });
    emit('org-a', 'rescue:r1');
    const a = wsHolder('org-a');
    const resumed = { ...prepared('rescueUpdated', 'r1'), after: 'e1' };
    const stream = await engine.subscribe(a.holder, resumed, await engine.anchorOf(a.holder.subscriber, resumed));
    emit('org-a', 'rescue:r1');
    await liveRuns;
    readHistory();
    const ids = [(await stream.next()).value?.extensions?.event];
    await settle();
    finishLive();
    for (let next = await nextWithin(stream); next; next = await nextWithin(stream)) ids.push(next.extensions?.event);
    expect(executions).toBe(2);
    expect(ids.map((e) => (e as { id: string }).id)).toEqual(['e2']);
    await engine.shutdown();
  });

  it('drops a subscriber that does not read as a slow consumer (4408), past queueMax events waiting', async () => {
    const { engine, emit } = engineWith();
    const a = wsHolder('org-a');
    await engine.subscribe(a.holder, prepared('rescueUpdated', 'r1'));
    for (let i = 0; i < 3; i++) {
      emit('org-a', 'rescue:r1');
      await settle();
    }
    expect(a.closes).toEqual([]);
    emit('org-a', 'rescue:r1');
    expect(a.closes).toEqual([[4408, 'slow consumer: more than 3 events waiting']]);
    await engine.shutdown();
  });

  it("drops a subscriber whose WebSocket holds more than bufferMax unsent bytes (4408)", async () => {
    const { engine, emit } = engineWith();
    const a = wsHolder('org-a', 1001);
    await engine.subscribe(a.holder, prepared('rescueUpdated', 'r1'));
    emit('org-a', 'rescue:r1');
    expect(a.closes).toEqual([[4408, 'slow consumer: more than 1000 bytes unsent']]);
    await engine.shutdown();
  });

  it("closes with 4401 when the subscriber's token fails its check before an event, without running it", async () => {
    const { engine, emit, ran } = engineWith({ auth: { authenticate: async () => { throw new Error('not used'); }, recheck: async () => { throw unauthenticated('The client of this access token is unknown or disabled'); } } });
    const a = wsHolder('org-a');
    await engine.subscribe(a.holder, prepared('rescueUpdated', 'r1'));
    emit('org-a', 'rescue:r1');
    await settle();
    expect(ran).toEqual([]);
    expect(a.closes).toEqual([[4401, 'Unauthorized: The client of this access token is unknown or disabled']]);
    await engine.shutdown();
  });

  it('ends a stream without close codes (SSE) with a last error result, and frees its place', async () => {
    const { engine } = engineWith();
    const holder: Holder = { transport: 'sse', subscriber: subscriber('org-a') };
    const stream = await engine.subscribe(holder, prepared('rescueUpdated', 'r1'));
    expect(engine.active).toBe(1);
    await engine.shutdown();
    expect(await stream.next()).toEqual({ value: { errors: [{ message: 'going away: the server is shutting down', extensions: { code: 'SHUTTING_DOWN', closeCode: 1001 } }] }, done: false });
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    expect(engine.active).toBe(0);
  });

  it('skips an event whose query finds nothing (another organisation\'s id, a deleted entity)', async () => {
    const { engine, emit } = engineWith({ execute: async (p) => ({ data: { [p.responseKey]: null } }) });
    const holder: Holder = { transport: 'sse', subscriber: subscriber('org-a') };
    const stream = await engine.subscribe(holder, prepared('rescueUpdated', 'r1'));
    emit('org-a', 'rescue:r1');
    await settle();
    await engine.shutdown();
    expect((await stream.next()).value?.errors?.[0]?.extensions?.code).toBe('SHUTTING_DOWN');
  });
});

describe('SubscriptionEngine sharing executions', () => {
  const holderOf = (caller: Subscriber['caller']): Holder => ({ transport: 'sse', subscriber: { caller, authorization: `Bearer ${caller.clientId}`, expiresAt: Date.now() + 3_600_000 } });
  it('shares one execution only between the same identity: client, organisation, scopes and end user alike', async () => {
    const { engine, emit, ran } = engineWith({ maxPerClient: 10 });
    const base = { clientId: 'c1', orgId: 'org-a', scopes: ['roadside', 'b2b'] as Subscriber['caller']['scopes'] };
    const callers = [base, { ...base, scopes: [...base.scopes].reverse() }, { ...base, scopes: base.scopes.slice(0, 1) }, { ...base, userId: 'u1' }, { ...base, userId: 'u2' }, { ...base, clientId: 'c2' }];
    const streams = await Promise.all(callers.map((caller) => engine.subscribe(holderOf(caller), prepared('rescueUpdated', 'r1'))));
    emit('org-a', 'rescue:r1');
    // The same scopes in another order are the same identity: 5 executions for 6 subscribers.
    await expect.poll(() => ran.length).toBe(5);
    await settle();
    expect(ran).toHaveLength(5);
    for (const stream of streams) expect((await stream.next()).value?.extensions?.event).toMatchObject({ id: 'e1' });
    await engine.shutdown();
  });

  it('plans each shared execution\'s query when it starts, before any event; a planning failure ends nothing', async () => {
    const planned: string[] = [];
    const { engine, emit, ran } = engineWith({
      plan: async ({ query }) => { planned.push(query); if (planned.length === 2) throw new Error('planner failed'); },
    });
    const withQuery = (id: string): PreparedSubscription => ({ ...prepared('rescueUpdated', id), query: `query for ${id}` });
    const streams = [
      await engine.subscribe({ transport: 'sse', subscriber: subscriber('org-a') }, withQuery('r1')),
      await engine.subscribe({ transport: 'sse', subscriber: subscriber('org-a') }, withQuery('r1')),
      await engine.subscribe({ transport: 'sse', subscriber: subscriber('org-a', 'other-client') }, withQuery('r1')),
    ];
    await settle();
    // Two identities, two shared executions: each planned once, and nothing run yet.
    expect(planned).toEqual(['query for r1', 'query for r1']);
    expect(ran).toEqual([]);
    emit('org-a', 'rescue:r1');
    for (const stream of streams) expect((await stream.next()).value?.extensions?.event).toMatchObject({ id: 'e1' });
    await engine.shutdown();
  });

  it('pushes a subscriber that joins a shared execution only the events that came after it', async () => {
    let finish!: () => void;
    const { engine, emit } = engineWith({
      execute: (p) => new Promise((resolve) => { finish = () => resolve({ data: { [p.responseKey]: { status: 'EN_ROUTE' } } }); }),
    });
    const first = await engine.subscribe({ transport: 'sse', subscriber: subscriber('org-a') }, prepared('rescueUpdated', 'r1'));
    emit('org-a', 'rescue:r1');
    emit('org-a', 'rescue:r1');
    await settle();
    const late = await engine.subscribe({ transport: 'sse', subscriber: subscriber('org-a') }, prepared('rescueUpdated', 'r1'));
    emit('org-a', 'rescue:r1');
    for (let i = 0; i < 3; i++) {
      finish();
      await settle();
    }
    await engine.shutdown();
    const ids = async (stream: AsyncIterableIterator<{ extensions?: Record<string, unknown> }>) => {
      const seen: unknown[] = [];
      for await (const result of stream) seen.push((result.extensions?.event as { id?: string } | undefined)?.id ?? 'closed');
      return seen;
    };
    expect(await ids(first)).toEqual(['e1', 'e2', 'e3', 'closed']);
    expect(await ids(late)).toEqual(['e3', 'closed']);
  });
});

describe('SubscriptionEngine and closing connections', () => {
  it('gives the place back when the connection closed while it was being taken', async () => {
    let taken = 0;
    let released = 0;
    let finishAcquire!: () => void;
    const clientLimit = {
      acquire: () => new Promise<boolean>((resolve) => { taken += 1; finishAcquire = () => resolve(true); }),
      release: () => { released += 1; },
      close() {},
    };
    const { engine } = engineWith({ clientLimit });
    const a = wsHolder('org-a');
    engine.open(a.holder);
    const starting = engine.subscribe(a.holder, prepared('rescueUpdated', 'r1'));
    await settle();
    engine.release(a.holder);
    finishAcquire();
    const stream = await starting;
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    expect([taken, released, engine.active]).toEqual([1, 1, 0]);
    await engine.shutdown();
  });

  it('closes a connection once, however many reasons come', async () => {
    const { engine } = engineWith();
    const a = wsHolder('org-a');
    engine.open(a.holder);
    engine.close(a.holder, 4401, 'Unauthorized: disabled');
    engine.close(a.holder, 4408, 'slow consumer: x');
    expect(a.closes).toEqual([[4401, 'Unauthorized: disabled']]);
    await engine.shutdown();
  });
});
