import { randomBytes } from 'node:crypto';
import { createClient } from 'graphql-ws';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Gateway } from '../../../gateway/app.ts';
import { bookedRescue, updateRescue } from '../../support/rescues.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { sseClient, subscriptionsActive, wsClient, type Closed } from '../../support/subscriptions.ts';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const WATCH = 'subscription { rescueUpdated(reqId: "r") { status } }';

/** gateway_subscriptions_closed_total by reason. */
async function closedByReason(gateway: Gateway): Promise<Record<string, number>> {
  const { values } = await gateway.metrics.subscriptionsClosed.get();
  return Object.fromEntries(values.map((v) => [v.labels.reason, v.value]));
}

/** Resolves when `gateway` has counted `count` more closes with `reason` than `before` did. */
async function untilClosed(gateway: Gateway, before: Record<string, number>, reason: string, count = 1) {
  while (((await closedByReason(gateway))[reason] ?? 0) < (before[reason] ?? 0) + count) await new Promise((r) => setTimeout(r, 20));
}

/** An acknowledged graphql-ws connection holding no subscription. */
async function connected(url: string, token: string) {
  const ws = wsClient(url, `Bearer ${token}`);
  await new Promise<void>((resolve, reject) => {
    ws.client.on('connected', () => resolve());
    void ws.closed.then((c) => reject(new Error(`closed ${c.code} ${c.reason}`)));
  });
  return ws;
}

/**
 * graphql-ws's own client as an app would make it (retries on, connects at once): the sockets it
 * opened, how each closed, and the error it gave up with, if it did.
 */
function appClient(url: string, token: string) {
  const closes: Closed[] = [];
  const given: { up?: unknown } = {};
  let sockets = 0;
  const client = createClient({
    url: url.replace(/^http/, 'ws') + '/graphql', webSocketImpl: WebSocket, lazy: false,
    connectionParams: { authorization: `Bearer ${token}` },
    retryWait: () => new Promise((r) => setTimeout(r, 50)),
    onNonLazyError: (error) => { given.up = error; },
    on: { opened: () => { sockets += 1; }, closed: (event) => { const { code, reason } = event as Closed; closes.push({ code, reason: String(reason) }); } },
  });
  return { client, closes, given, get sockets() { return sockets; } };
}

describe('WebSocket connections', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['roadside'], env: { SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT: '2', SUBSCRIPTIONS_MAX_CONNECTIONS_PER_PROCESS: '3' } });
  });
  afterAll(async () => { await t?.close(); });

  it('close with 4429 past SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT, even holding no subscription; graphql-ws does not retry it', async () => {
    const before = await closedByReason(t.stack.gateway);
    const held = [await connected(t.url, t.token), await connected(t.url, t.token)];
    const third = appClient(t.url, t.token);
    await expect.poll(() => third.given.up, { timeout: 10_000 }).toMatchObject({ code: 4429, reason: expect.stringMatching(/^Too many connections: client test-client holds its maximum of 2$/) });
    await new Promise((r) => setTimeout(r, 300));
    expect(third.sockets).toBe(1);
    expect((await closedByReason(t.stack.gateway)).too_many).toBe((before.too_many ?? 0) + 1);
    await third.client.dispose();

    // A client's place comes back when its connection closes (counted as the client's close).
    held[0]!.dispose();
    await untilClosed(t.stack.gateway, before, 'client_closed');
    const again = await connected(t.url, t.token);
    for (const ws of [held[1]!, again]) ws.dispose();
    await untilClosed(t.stack.gateway, before, 'client_closed', 3);
  });

  it('close with 4429 past SUBSCRIPTIONS_MAX_CONNECTIONS_PER_PROCESS, whatever the client', async () => {
    const other = await t.clientFor('org-connections');
    const held = [await connected(t.url, t.token), await connected(t.url, t.token), await connected(t.url, other.token)];
    const refused = wsClient(t.url, `Bearer ${other.token}`);
    expect(await refused.closed).toEqual({ code: 4429, reason: 'Too many connections: this server holds its maximum of 3; retry on another' });
    for (const ws of [...held, refused]) ws.dispose();
  });
});

describe('gateway_subscriptions_closed_total over SSE (the engine counts streams as they end)', () => {
  it('counts a stream its client ended as client_closed, and one the server ended with its reason', async () => {
    const own = await startTestStack({ subgraphs: ['roadside'] });
    const before = await closedByReason(own.stack.gateway);
    const sse = sseClient(own.url, `Bearer ${own.token}`);
    const ended = sse.subscribe(WATCH);
    await subscriptionsActive(own.stack.gateway, 1);
    ended.dispose();
    await untilClosed(own.stack.gateway, before, 'client_closed');
    const cut = sse.subscribe(WATCH);
    await subscriptionsActive(own.stack.gateway, 1);
    const gateway = own.stack.gateway;
    await own.close();
    await cut.ended;
    expect((await closedByReason(gateway)).shutdown).toBe((before.shutdown ?? 0) + 1);
    sse.dispose();
  });
});

describe('an idle or unresponsive WebSocket', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['roadside'], env: { SUBSCRIPTIONS_IDLE_CLOSE_MS: '400', SUBSCRIPTIONS_KEEPALIVE_MS: '300' } });
  });
  afterAll(async () => { await t?.close(); });

  it('is closed with 1000 when it has started no subscription within SUBSCRIPTIONS_IDLE_CLOSE_MS; graphql-ws reconnects, and a subscribed one stays', async () => {
    const before = await closedByReason(t.stack.gateway);
    const idle = appClient(t.url, t.token);
    await expect.poll(() => idle.sockets, { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect(idle.closes[0]).toEqual({ code: 1000, reason: 'idle: no subscription within 400 ms' });
    expect(idle.given.up).toBeUndefined();
    await idle.client.dispose();
    expect((await closedByReason(t.stack.gateway)).idle).toBeGreaterThanOrEqual((before.idle ?? 0) + 1);

    const busy = wsClient(t.url, `Bearer ${t.token}`);
    busy.subscribe(WATCH);
    await subscriptionsActive(t.stack.gateway, 1);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(busy.closes).toEqual([]);
    busy.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });

  it('that does not answer pings is dropped and counted as a keep-alive timeout', async () => {
    const before = await closedByReason(t.stack.gateway);
    const deaf = new WebSocket(`${t.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', { autoPong: false });
    const closed = new Promise<number>((resolve) => deaf.on('close', (code) => resolve(code)));
    deaf.on('open', () => deaf.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${t.token}` } })));
    deaf.on('message', (data) => {
      if (JSON.parse(String(data)).type === 'connection_ack') deaf.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: WATCH } }));
    });
    expect(await closed).toBe(1006);
    await untilClosed(t.stack.gateway, before, 'keepalive_timeout');
  });

  it('stays open when the gateway itself stalls past SUBSCRIPTIONS_KEEPALIVE_MS right after a ping it was answered', async () => {
    const before = await closedByReason(t.stack.gateway);
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    ws.subscribe(WATCH);
    await subscriptionsActive(t.stack.gateway, 1);
    // The client answers the ping at once (ws's auto-pong), then the process holding the gateway stalls for
    // more than two keep-alive periods, as an overloaded machine would: the pong waits unread on its socket.
    ws.sockets[0]!.once('ping', () => { const until = Date.now() + 800; while (Date.now() < until); });
    await new Promise((r) => setTimeout(r, 1_500));
    expect(ws.closes).toEqual([]);
    expect((await closedByReason(t.stack.gateway)).keepalive_timeout ?? 0).toBe(before.keepalive_timeout ?? 0);
    ws.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });
});

/**
 * A keep-alive of its own, longer than a report takes on a loaded machine: the socket is paused
 * before the report, and a report slower than the ping and its deadline (300 ms above) left the
 * socket with no result unread, dropped as a keep-alive timeout rather than a slow consumer.
 */
describe('a WebSocket that stops reading while results wait', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['roadside'], env: { SUBSCRIPTIONS_KEEPALIVE_MS: '1500' } });
  });
  afterAll(async () => { await t?.close(); });

  it('is closed as a slow consumer (4408), not cut by the keep-alive', async () => {
    const before = await closedByReason(t.stack.gateway);
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    const reqId = await bookedRescue(t);
    ws.subscribe('subscription($id: ID!) { rescueUpdated(reqId: $id) { status } }', { id: reqId });
    await subscriptionsActive(t.stack.gateway, 1);
    ws.sockets[0]!.pause();
    // One result sent to the paused socket, far below 100 events or 4 MiB.
    await updateRescue(t, reqId, 'EN_ROUTE');
    await untilClosed(t.stack.gateway, before, 'slow_consumer');
    ws.sockets[0]!.resume();
    expect(await ws.closed).toEqual({ code: 4408, reason: 'slow consumer: results unread and no answer to a ping within 1500 ms' });
    expect((await closedByReason(t.stack.gateway)).keepalive_timeout ?? 0).toBe(before.keepalive_timeout ?? 0);
    ws.dispose();
  });
});

describe('SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT with REDIS_URL', () => {
  const env = { REDIS_URL, REDIS_KEY_PREFIX: `frg-test-ws-${randomBytes(6).toString('hex')}:`, SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT: '2' };
  let one: TestStack;
  let two: TestStack;
  beforeAll(async () => {
    [one, two] = await Promise.all([startTestStack({ subgraphs: ['roadside'], env }), startTestStack({ subgraphs: ['roadside'], env })]);
  });
  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${env.REDIS_KEY_PREFIX}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it("counts a client's connections over every process", async () => {
    const first = await connected(one.url, one.token);
    const second = await connected(two.url, two.token);
    const third = wsClient(one.url, `Bearer ${one.token}`);
    expect(await third.closed).toEqual({ code: 4429, reason: 'Too many connections: client test-client holds its maximum of 2' });
    second.dispose();
    await untilClosed(two.stack.gateway, {}, 'client_closed');
    const fourth = await connected(one.url, one.token);
    for (const ws of [first, third, fourth]) ws.dispose();
  });
});

describe('the rate limit of an anonymous request (a WebSocket upgrade, whose token comes later)', () => {
  let t: TestStack;
  beforeAll(async () => { t = await startTestStack({ subgraphs: ['roadside'], env: { RATE_LIMIT_PER_MINUTE: '2' } }); });
  afterAll(async () => { await t?.close(); });

  it('is keyed by the address, an IPv6 address by its /64', async () => {
    const upgrade = (remoteAddress: string) => t.stack.gateway.app.inject({ method: 'GET', url: '/graphql', remoteAddress, headers: { connection: 'Upgrade', upgrade: 'websocket' } }).then((r) => r.statusCode);
    expect(await upgrade('2001:db8:1:2::1')).not.toBe(429);
    expect(await upgrade('2001:db8:1:2:aaaa::2')).not.toBe(429);
    // The third from the same /64 (another address in it), then another /64, and IPv4 on its own.
    expect(await upgrade('2001:db8:1:2:ffff::3')).toBe(429);
    expect(await upgrade('2001:db8:1:3::1')).not.toBe(429);
    expect(await upgrade('192.0.2.1')).not.toBe(429);
  });
});
