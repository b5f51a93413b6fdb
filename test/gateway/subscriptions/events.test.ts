import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { outboxesEmpty } from '../../support/rows.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { sseClient, subscriptionsActive, wsClient, type Watcher } from '../../support/subscriptions.ts';
import { bookedRescue as bookedRescueOn, gqlOn, updateRescue } from '../../support/rescues.ts';

let t: TestStack;

beforeAll(async () => { t = await startTestStack({ subgraphs: ['roadside', 'booking', 'scoring'] }); });
afterAll(async () => { await t?.close(); });

const gql = (query: string, variables: Record<string, unknown>, token = t.token) => gqlOn(t)(query, variables, token);
const bookedRescue = (token = t.token) => bookedRescueOn(t, token);
const update = (reqId: string, status: string, token = t.token) => updateRescue(t, reqId, status, token);

const RESCUE = 'subscription($id: ID!) { rescueUpdated(reqId: $id) { reqId status etaMinutes providerPosition { latitude } } }';
const STATUSES = ['EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED'];

/** Moves the rescue through every status, each after the watcher received the previous one. */
async function driveThrough(reqId: string, watching: Watcher) {
  for (const [i, status] of STATUSES.entries()) {
    await update(reqId, status);
    expect((await watching.nth(i + 1)).data.rescueUpdated.status).toBe(status);
  }
}

describe('rescueUpdated', () => {
  it('over graphql-ws: every status of a dispatched rescue, in order, none missing', async () => {
    const reqId = await bookedRescue();
    await outboxesEmpty(t.stack);
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    const watching = ws.subscribe(RESCUE, { id: reqId });
    await subscriptionsActive(t.stack.gateway, 1);
    await driveThrough(reqId, watching);
    expect(watching.results.map((r) => r.data.rescueUpdated.status)).toEqual(STATUSES);
    expect(watching.results[3]!.data.rescueUpdated).toMatchObject({ reqId, etaMinutes: null, providerPosition: { latitude: 41.88 } });
    expect(watching.results.every((r) => r.errors === undefined)).toBe(true);
    ws.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });

  it('over graphql-sse, in both of its modes: every status in order', async () => {
    for (const single of [false, true]) {
      const reqId = await bookedRescue();
      await outboxesEmpty(t.stack);
      const sse = sseClient(t.url, `Bearer ${t.token}`, single);
      const watching = sse.subscribe(RESCUE, { id: reqId });
      await subscriptionsActive(t.stack.gateway, 1);
      await driveThrough(reqId, watching);
      expect(watching.results.map((r) => r.data.rescueUpdated.status)).toEqual(STATUSES);
      sse.dispose();
      await subscriptionsActive(t.stack.gateway, 0);
    }
  });

  it('pushes one result per committed event when updates come faster than the subscriber reads, ending on the last status', async () => {
    const reqId = await bookedRescue();
    await outboxesEmpty(t.stack);
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    const watching = ws.subscribe('subscription($id: ID!) { rescueUpdated(reqId: $id) { status statusHistory { status } } }', { id: reqId });
    await subscriptionsActive(t.stack.gateway, 1);
    for (const status of STATUSES) await update(reqId, status);
    await watching.nth(4);
    // Each push is the rescue when its query ran (at or after its event): never earlier than the event, and the history holds every status.
    const seen = watching.results.map((r) => STATUSES.indexOf(r.data.rescueUpdated.status));
    expect(seen).toEqual([...seen].sort());
    expect(watching.results[3]!.data.rescueUpdated.statusHistory.map((e: { status: string }) => e.status)).toEqual(['BOOKED', ...STATUSES]);
    ws.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });

  it("another organisation's rescue id yields nothing, and that organisation's events never reach the subscriber", async () => {
    const other = await t.clientFor('org-sub-other');
    const theirs = await bookedRescue(other.token);
    const ours = await bookedRescue();
    await outboxesEmpty(t.stack);
    const ws = wsClient(t.url, `Bearer ${other.token}`);
    const peeking = ws.subscribe(RESCUE, { id: ours });
    const own = ws.subscribe(RESCUE, { id: theirs });
    await subscriptionsActive(t.stack.gateway, 2);
    for (const status of STATUSES) await update(ours, status);
    // Then one event of their own, after every event of ours committed: it arrives, ours never did.
    await update(theirs, 'EN_ROUTE', other.token);
    expect((await own.nth(1)).data.rescueUpdated).toMatchObject({ reqId: theirs, status: 'EN_ROUTE' });
    expect(peeking.results).toEqual([]);
    ws.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });
});

describe('a subscriber that stops reading', () => {
  it('is dropped as a slow consumer (4408) once more than 4 MiB wait unsent on its WebSocket', async () => {
    const reqId = await bookedRescue();
    const content = Buffer.alloc(512 * 1024, 'x').toString('base64');
    await gql('mutation($id: ID!, $c: String!) { uploadProviderFile(input: { reqId: $id, fileType: "RECEIPT", fileName: "big.txt", contentType: "text/plain", contentBase64: $c }) { contentId } }', { id: reqId, c: content });
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    try {
      // About 14 MB a result: twenty copies of the file, more than the kernel buffers of a connection take.
      const files = Array.from({ length: 20 }, (_, i) => `f${i}: files { contentBase64 }`).join(' ');
      const watching = ws.subscribe(`subscription($id: ID!) { rescueUpdated(reqId: $id) { status ${files} } }`, { id: reqId });
      await subscriptionsActive(t.stack.gateway, 1);
      ws.sockets[0]!.pause();
      const { subscriptionsClosed, subscriptionEvents } = t.stack.gateway.metrics;
      const dropped = async () => (await subscriptionsClosed.get()).values.find((v) => v.labels.reason === 'slow_consumer')?.value ?? 0;
      const pushed = async () => (await subscriptionEvents.get()).values.find((v) => v.labels.transport === 'ws')?.value ?? 0;
      const before = await dropped();
      for (const status of STATUSES) {
        const sent = await pushed();
        await update(reqId, status);
        // The next event is dispatched with this one's result on the socket, unread.
        await vi.waitFor(async () => expect(await pushed() > sent || await dropped() > before).toBe(true), { timeout: 20_000 });
        if (await dropped() > before) break;
      }
      expect(await dropped()).toBe(before + 1);
      ws.sockets[0]!.resume();
      expect(await ws.closed).toEqual({ code: 4408, reason: 'slow consumer: more than 4194304 bytes unsent' });
      await watching.ended;
      await subscriptionsActive(t.stack.gateway, 0);
    } finally {
      // A failure above must not leave its paused socket, and the subscription on it, to the next test.
      ws.sockets[0]?.terminate();
      ws.dispose();
    }
  });
});

describe('bookingUpdated', () => {
  it("runs the selection through the graph: the booking (booking subgraph) and its user's data (scoring subgraph)", async () => {
    const vin = '1HGCM82633A004352';
    await gql('mutation { createUser(input: { userId: "sub-driver", dateOfBirth: "1990-04-01", homeZip: "60606" }) { userId } }', {});
    await gql('mutation($vin: VIN!) { createVehicle(vin: $vin, deviceId: "359881234567890") { vin } }', { vin });
    const { startBooking: b } = await gql('mutation($vin: VIN!) { startBooking(input: { vin: $vin, userId: "sub-driver", startTimestamp: 1800000000 }) { bookingId } }', { vin });
    await outboxesEmpty(t.stack);
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    const watching = ws.subscribe('subscription($id: ID!) { bookingUpdated(bookingId: $id) { bookingId status actualEndTimestamp user { userId dateOfBirth homeZip } } }', { id: b.bookingId });
    await subscriptionsActive(t.stack.gateway, 1);
    await gql('mutation($id: ID!) { endBooking(bookingId: $id, actualEndTimestamp: 1800003600) { status } }', { id: b.bookingId });
    const user = { userId: 'sub-driver', dateOfBirth: '1990-04-01', homeZip: '60606' };
    const event = { id: expect.any(String), type: 'booking.ended', occurredAt: expect.any(String) };
    expect(await watching.nth(1)).toEqual({
      data: { bookingUpdated: { bookingId: b.bookingId, status: 'ENDED', actualEndTimestamp: 1800003600, user } },
      extensions: { event },
    });
    ws.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });
});

describe('userUpdated', () => {
  it("pushes the user after a change of the user's data", async () => {
    await gql('mutation { createUser(input: { userId: "sub-watched", dateOfBirth: "1985-02-03", homeZip: "60606" }) { userId } }', {});
    await outboxesEmpty(t.stack);
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    const watching = ws.subscribe('subscription($id: ID!) { userUpdated(userId: $id) { userId homeZip enrollmentStatus } }', { id: 'sub-watched' });
    await subscriptionsActive(t.stack.gateway, 1);
    await gql('mutation { updateUser(userId: "sub-watched", input: { homeZip: "94105" }) { userId } }', {});
    expect((await watching.nth(1)).data.userUpdated).toMatchObject({ userId: 'sub-watched', homeZip: '94105' });
    ws.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });
});
