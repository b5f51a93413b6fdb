import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QueryPlanner } from '@apollo/query-planner';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { multipartClient, sseClient, subscriptionsActive, wsClient, type Received, type Watcher } from '../../support/subscriptions.ts';
import { bookedRescue, gqlOn } from '../../support/rescues.ts';

let t: TestStack;

// 20 a minute: each client may run 2 executions per 6-second window.
beforeAll(async () => { t = await startTestStack({ subgraphs: ['roadside'], env: { SUBSCRIPTIONS_EXECUTIONS_PER_MINUTE: '20' } }); });
afterAll(async () => { await t?.close(); });

const RESCUE = 'subscription($id: ID!) { rescueUpdated(reqId: $id) { reqId status providerPosition { latitude } } }';
const executions = async () => (await t.stack.gateway.metrics.subscriptionExecutions.get()).values[0]?.value ?? 0;
/** A position report: one committed rescue.updated event. */
const report = (reqId: string, latitude: number, token: string) => gqlOn(t)(
  'mutation($id: ID!, $lat: Float!) { updateRescueStatus(input: { reqId: $id, status: EN_ROUTE, latitude: $lat, longitude: -87.636 }) { status } }',
  { id: reqId, lat: latitude }, token,
);
/** A client of its own (its own budget) in a new organisation, with a rescue of that organisation. */
async function tenant(org: string) {
  const client = await t.clientFor(org);
  return { ...client, reqId: await bookedRescue(t, client.token) };
}
const covered = (results: Received[]) => results.reduce((sum, r) => sum + ((r.extensions?.event as { coalesced?: number })?.coalesced ?? 1), 0);
const until = async (done: () => boolean) => { while (!done()) await new Promise((resolve) => setTimeout(resolve, 20)); };

describe('shared executions', () => {
  it('runs one execution per event for subscribers with the same document, variables and identity; pushes each the same result', async () => {
    const a = await tenant('org-fan-share');
    const other = await t.clientFor('org-fan-share');
    const connections = [1, 2, 3, 4].map(() => wsClient(t.url, `Bearer ${a.token}`));
    const same = connections.map((ws) => ws.subscribe(RESCUE, { id: a.reqId }));
    const otherSelection = connections[0]!.subscribe('subscription($id: ID!) { rescueUpdated(reqId: $id) { status } }', { id: a.reqId });
    const otherClient = wsClient(t.url, `Bearer ${other.token}`);
    const otherIdentity = otherClient.subscribe(RESCUE, { id: a.reqId });
    await subscriptionsActive(t.stack.gateway, 6);
    const before = await executions();
    await report(a.reqId, 41.9, a.token);
    const all: Watcher[] = [...same, otherSelection, otherIdentity];
    const first = await Promise.all(all.map((w) => w.nth(1)));
    // Four identical subscriptions: one execution; another selection and another client: one each.
    expect(await executions()).toBe(before + 3);
    const event = first[0]!.extensions!.event as { id: string };
    expect(event).toEqual({ id: expect.any(String), type: 'rescue.status_changed', occurredAt: expect.any(String) });
    for (const result of first) expect(result.extensions).toEqual({ event });
    expect(first.slice(0, 4).every((r) => JSON.stringify(r) === JSON.stringify(first[0]))).toBe(true);
    expect(first[0]!.data.rescueUpdated).toEqual({ reqId: a.reqId, status: 'EN_ROUTE', providerPosition: { latitude: 41.9 } });
    for (const ws of [...connections, otherClient]) ws.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });

  it('plans a subscription\'s query when it starts: its first event plans nothing', async () => {
    const a = await tenant('org-fan-plan');
    // The report's own mutation planned beforehand: what is counted is the subscription's query.
    await report(a.reqId, 41.7, a.token);
    const planning = vi.spyOn(QueryPlanner.prototype, 'buildQueryPlan');
    try {
      const ws = wsClient(t.url, `Bearer ${a.token}`);
      const watcher = ws.subscribe('subscription PlannedAtStart($id: ID!) { rescueUpdated(reqId: $id) { etaMinutes status } }', { id: a.reqId });
      await subscriptionsActive(t.stack.gateway, 1);
      await vi.waitFor(() => expect(planning).toHaveBeenCalledTimes(1), { timeout: 10_000 });
      await report(a.reqId, 41.8, a.token);
      expect((await watcher.nth(1)).data.rescueUpdated).toMatchObject({ status: 'EN_ROUTE' });
      expect(planning).toHaveBeenCalledTimes(1);
      ws.dispose();
      await subscriptionsActive(t.stack.gateway, 0);
    } finally {
      planning.mockRestore();
    }
  });

  it("never runs for another organisation's events: a subscriber of another organisation neither receives nor causes an execution", async () => {
    const ours = await tenant('org-fan-ours');
    const theirs = await tenant('org-fan-theirs');
    const watching = wsClient(t.url, `Bearer ${ours.token}`);
    const mine = watching.subscribe(RESCUE, { id: ours.reqId });
    const peeking = wsClient(t.url, `Bearer ${theirs.token}`);
    const peek = peeking.subscribe(RESCUE, { id: ours.reqId });
    await subscriptionsActive(t.stack.gateway, 2);
    const before = await executions();
    await report(ours.reqId, 41.91, ours.token);
    await mine.nth(1);
    // Then an event of their own organisation, which their subscription (on our id) does not watch.
    await report(theirs.reqId, 41.92, theirs.token);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await executions()).toBe(before + 1);
    expect(peek.results).toEqual([]);
    watching.dispose();
    peeking.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });

  it('serialises a shared result once for all its subscribers, on every transport: WebSocket, SSE (a stream each, a reserved one) and multipart', async () => {
    const a = await tenant('org-fan-once');
    const clients = [wsClient(t.url, `Bearer ${a.token}`), wsClient(t.url, `Bearer ${a.token}`), sseClient(t.url, `Bearer ${a.token}`),
      sseClient(t.url, `Bearer ${a.token}`, true), multipartClient(t.url, `Bearer ${a.token}`), multipartClient(t.url, `Bearer ${a.token}`)];
    const watchers = clients.map((client) => client.subscribe(RESCUE, { id: a.reqId }));
    await subscriptionsActive(t.stack.gateway, 6);
    const before = await executions();
    const stringify = vi.spyOn(JSON, 'stringify');
    try {
      await report(a.reqId, 41.93, a.token);
      const results = await Promise.all(watchers.map((w) => w.nth(1)));
      // Only a pushed result carries extensions.event: serialised itself, or as a message's payload.
      const pushed = (value: unknown) => (value as Received | undefined)?.extensions?.event !== undefined;
      expect(stringify.mock.calls.filter(([value]) => pushed(value) || pushed((value as { payload?: unknown })?.payload))).toHaveLength(1);
      expect(await executions()).toBe(before + 1);
      expect(new Set(results.map((r) => JSON.stringify(r))).size).toBe(1);
    } finally {
      stringify.mockRestore();
      for (const w of watchers) w.dispose();
      for (const client of clients) if ('dispose' in client) client.dispose();
    }
    await subscriptionsActive(t.stack.gateway, 0);
  });
});

describe('the execution budget', () => {
  it('past SUBSCRIPTIONS_EXECUTIONS_PER_MINUTE delays and coalesces pushes: the latest state, naming the latest event and how many it covers', async () => {
    const a = await tenant('org-fan-budget');
    const ws = wsClient(t.url, `Bearer ${a.token}`);
    const watching = ws.subscribe(RESCUE, { id: a.reqId });
    await subscriptionsActive(t.stack.gateway, 1);
    const latitudes = [41.81, 41.82, 41.83, 41.84, 41.85, 41.86];
    for (const latitude of latitudes) await report(a.reqId, latitude, a.token);
    await until(() => covered(watching.results) >= latitudes.length);
    expect(covered(watching.results)).toBe(latitudes.length);
    // Two executions fit the window; the events after them wait for the next one, and arrive as one result.
    expect(watching.results.length).toBeLessThan(latitudes.length);
    const last = watching.results.at(-1)!;
    expect(last.extensions!.event).toEqual({ id: expect.any(String), type: 'rescue.updated', occurredAt: expect.any(String), coalesced: expect.any(Number) });
    expect((last.extensions!.event as { coalesced: number }).coalesced).toBeGreaterThan(1);
    expect(last.data.rescueUpdated.providerPosition).toEqual({ latitude: 41.86 });
    const ids = watching.results.map((r) => (r.extensions!.event as { id: string }).id);
    expect(new Set(ids).size).toBe(ids.length);
    ws.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });
});
