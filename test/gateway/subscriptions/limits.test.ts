import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { sseClient, subscriptionsActive, wsClient } from '../../support/subscriptions.ts';

let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['roadside'], env: { SUBSCRIPTIONS_MAX_PER_CLIENT: '2', SUBSCRIPTIONS_MAX_PER_PROCESS: '3', SUBSCRIPTIONS_MAX_COST: '100' } });
});
afterAll(async () => { await t?.close(); });

const watch = (id: string) => `subscription { rescueUpdated(reqId: "${id}") { status } }`;
/** statusHistory is assumed 20 long and files 50: 3 of each cost well over 100. */
const COSTLY = `subscription { rescueUpdated(reqId: "r") { a: statusHistory { position { latitude } } b: statusHistory { position { latitude } } c: statusHistory { position { latitude } }
  d: files { contentId } e: files { contentId } f: files { contentId } } }`;

describe('the cost of a subscription', () => {
  it('is checked when it starts: over SUBSCRIPTIONS_MAX_COST it is refused with COST_LIMIT_EXCEEDED, a query of the same cost runs', async () => {
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    const refused = ws.subscribe(COSTLY);
    expect(await refused.ended).toEqual([expect.objectContaining({ extensions: expect.objectContaining({ code: 'COST_LIMIT_EXCEEDED', maxCost: 100 }) })]);
    // The connection stays open for subscriptions within the limit.
    const fine = ws.subscribe(watch('r'));
    await subscriptionsActive(t.stack.gateway, 1);
    fine.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
    ws.dispose();

    const res = await t.request('POST', '/graphql/stream', { token: t.token, headers: { accept: 'text/event-stream' }, body: { query: COSTLY } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'COST_LIMIT_EXCEEDED', maxCost: 100 });
    // The same selection as a query is within GRAPHQL_MAX_COST (its default): a subscription pays its cost on every event.
    const query = await t.graphql(COSTLY.replace('subscription { rescueUpdated', 'query { rescue'));
    expect([query.status, query.errors]).toEqual([200, undefined]);
  });
});

describe('subscription limits', () => {
  it('closes with 4429 past SUBSCRIPTIONS_MAX_PER_CLIENT, and gives the places back when subscriptions end', async () => {
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    ws.subscribe(watch('a'));
    ws.subscribe(watch('b'));
    await subscriptionsActive(t.stack.gateway, 2);
    ws.subscribe(watch('c'));
    expect(await ws.closed).toEqual({ code: 4429, reason: expect.stringMatching(/^Too many subscriptions: client .* holds its maximum of 2$/) });
    await subscriptionsActive(t.stack.gateway, 0);
    ws.dispose();

    const again = wsClient(t.url, `Bearer ${t.token}`);
    again.subscribe(watch('a'));
    again.subscribe(watch('b'));
    await subscriptionsActive(t.stack.gateway, 2);
    again.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });

  it('closes with 4429 past SUBSCRIPTIONS_MAX_PER_PROCESS whatever the client, and answers SSE with 429', async () => {
    const other = await t.clientFor('org-sub-limits');
    const first = wsClient(t.url, `Bearer ${t.token}`);
    first.subscribe(watch('a'));
    first.subscribe(watch('b'));
    const second = wsClient(t.url, `Bearer ${other.token}`);
    second.subscribe(watch('c'));
    await subscriptionsActive(t.stack.gateway, 3);
    const res = await t.request('POST', '/graphql/stream', { token: other.token, headers: { accept: 'text/event-stream' }, body: { query: watch('d') } });
    expect(res.status).toBe(429);
    expect(res.body.errors[0]).toEqual({ message: 'Too many subscriptions: this server holds its maximum of 3; retry on another', extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } });
    second.subscribe(watch('d'));
    expect(await second.closed).toMatchObject({ code: 4429, reason: expect.stringContaining('this server holds its maximum of 3') });
    await subscriptionsActive(t.stack.gateway, 2);
    first.dispose();
    second.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });
});

describe('closing the gateway', () => {
  it('ends every subscription with 1001 (WebSocket) or a last SHUTTING_DOWN result (SSE, in both modes)', async () => {
    const own = await startTestStack({ subgraphs: ['roadside'] });
    const ws = wsClient(own.url, `Bearer ${own.token}`);
    const watching = ws.subscribe(watch('a'));
    const sse = sseClient(own.url, `Bearer ${own.token}`);
    const streaming = sse.subscribe(watch('a'));
    const single = sseClient(own.url, `Bearer ${own.token}`, true);
    const sharing = single.subscribe(watch('a'));
    await subscriptionsActive(own.stack.gateway, 3);
    await own.close();
    expect(await ws.closed).toEqual({ code: 1001, reason: 'going away: the server is shutting down' });
    await watching.ended;
    for (const stream of [streaming, sharing]) {
      await stream.ended;
      expect(stream.results.at(-1)!.errors![0]).toEqual({ message: 'going away: the server is shutting down', extensions: { code: 'SHUTTING_DOWN', closeCode: 1001 } });
    }
    ws.dispose();
    sse.dispose();
    single.dispose();
  });
});
