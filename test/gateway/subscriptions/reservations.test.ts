import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { sseClient, subscriptionsActive } from '../../support/subscriptions.ts';

/** How long a reservation waits for its stream here (30 s in service). */
const UNOPENED_MS = 1_000;
let t: TestStack;

beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring'], tuning: { reservationUnopenedMs: UNOPENED_MS } }); });
afterAll(async () => { await t?.close(); });

const USER = 'subscription($id: ID!) { userUpdated(userId: $id) { userId homeZip } }';
const reserve = (token: string) => t.request('PUT', '/graphql/stream', { token });
const openStream = (token: string, stream: string, signal?: AbortSignal) =>
  t.request('GET', '/graphql/stream', { token, signal, headers: { accept: 'text/event-stream', 'x-graphql-event-stream-token': stream } });
const gql = async (query: string, token: string) => {
  const res = await t.graphql(query, {}, token);
  if (res.errors) throw new Error(JSON.stringify(res.errors));
};
/** Fails as soon as a subscription ends instead of waiting for `active` subscriptions. */
const activeOrEnded = (count: number, ...watchers: { ended: Promise<unknown> }[]) => Promise.race([
  subscriptionsActive(t.stack.gateway, count),
  ...watchers.map((w) => w.ended.then((error) => { throw new Error(`a subscription ended: ${String(error)}`); })),
]);

describe('graphql-sse reservations (PUT /graphql/stream)', () => {
  it("of one organisation's clients, 10,050 attempts, leave another organisation's open stream working", async () => {
    const theirs = await t.clientFor('org-res-b');
    await gql('mutation { createUser(input: { userId: "res-1", dateOfBirth: "1990-04-01", homeZip: "60606" }) { userId } }', theirs.token);
    const sse = sseClient(t.url, `Bearer ${theirs.token}`, true);
    const first = sse.subscribe(USER, { id: 'res-1' });
    await activeOrEnded(1, first);

    const flooders = await Promise.all([1, 2, 3].map(() => t.clientFor('org-res-a')));
    const statuses: Record<number, number> = {};
    let sent = 0;
    const started = Date.now();
    await Promise.all(Array.from({ length: 30 }, async () => {
      while (sent < 10_050) {
        const { status } = await reserve(flooders[sent++ % 3]!.token);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }));
    const windows = Math.ceil((Date.now() - started) / 1000) + 1;

    // Their stream (opened before the flood, longer ago than an unopened reservation lives) takes a new operation.
    const second = sse.subscribe(USER, { id: 'res-1' });
    await activeOrEnded(2, first, second);
    await gql('mutation { updateUser(userId: "res-1", input: { homeZip: "94105" }) { userId } }', theirs.token);
    for (const watching of [first, second]) expect((await watching.nth(1)).data.userUpdated).toEqual({ userId: 'res-1', homeZip: '94105' });
    sse.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
    // The flood was bounded: ten each at a time; the unopened ones expire after a second, so each second of the
    // flood (however slow the machine makes it) may have granted the three clients thirty more.
    expect(statuses[201]! + statuses[429]!).toBe(10_050);
    expect(statuses[201]).toBeGreaterThanOrEqual(30);
    expect(statuses[201]).toBeLessThanOrEqual(30 * windows);
  }, 180_000);

  it("answers a client's 11th reservation with 429 problem+json and Retry-After, also through graphql-sse's client", async () => {
    const { token } = await t.clientFor('org-res-c');
    for (let i = 0; i < 10; i++) expect((await reserve(token)).status).toBe(201);
    const refused = await reserve(token);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.body).toMatchObject({ status: 429, code: 'TOO_MANY_RESERVATIONS', detail: expect.stringContaining('holds its maximum of 10') });

    const sse = sseClient(t.url, `Bearer ${token}`, true);
    const error = await sse.subscribe(USER, { id: 'res-1' }).ended as { response?: Response };
    expect(error.response?.status).toBe(429);
    sse.dispose();
  });

  it('drops a reservation not opened in time, and gives its place back', async () => {
    const { token } = await t.clientFor('org-res-d');
    const streams = await Promise.all(Array.from({ length: 10 }, async () => (await reserve(token)).body as string));
    expect((await reserve(token)).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, UNOPENED_MS + 200));
    expect((await openStream(token, streams[0]!)).status).toBe(404);
    for (let i = 0; i < 10; i++) expect((await reserve(token)).status).toBe(201);
  });

  it('keeps a stream that opened, and counts it until it closes', async () => {
    const { token } = await t.clientFor('org-res-e');
    const stream = (await reserve(token)).body as string;
    const early = await t.request('POST', '/graphql/stream', { token, headers: { 'x-graphql-event-stream-token': stream }, body: { query: USER, variables: { id: 'x' }, extensions: { operationId: 'a' } } });
    expect(early.status).toBe(409);
    expect(early.body.errors[0].extensions.code).toBe('STREAM_NOT_OPEN');

    const reading = new AbortController();
    const opening = openStream(token, stream, reading.signal).catch(() => undefined);
    for (let i = 0; i < 9; i++) expect((await reserve(token)).status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, UNOPENED_MS + 200));
    // The nine unopened ones expired; the open one still holds its place.
    for (let i = 0; i < 9; i++) expect((await reserve(token)).status).toBe(201);
    expect((await reserve(token)).status).toBe(429);
    const sent = await t.request('POST', '/graphql/stream', { token, headers: { 'x-graphql-event-stream-token': stream }, body: { query: USER, variables: { id: 'x' }, extensions: { operationId: 'a' } } });
    expect(sent.status).toBe(202);
    reading.abort();
    await opening;
    await subscriptionsActive(t.stack.gateway, 0);
  });
});
