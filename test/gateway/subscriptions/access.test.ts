import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { internalBearer } from '../../support/internal-token.ts';
import { adminToken, DEFAULT_CLIENT, startTestStack, TEST_HOP_KEY, type TestStack } from '../../support/stack.ts';
import { sseClient, subscriptionsActive, wsClient } from '../../support/subscriptions.ts';
import { INTERNAL_HOP_HEADER, signHop } from '../../../subgraphs/platform/internal-hop.ts';
import { ADMIN_CLIENTS_PATH } from '../../../gateway/admin/clients-routes.ts';

const APP_ORIGIN = 'http://app.example.test:3000';
let t: TestStack;

beforeAll(async () => { t = await startTestStack({ subgraphs: ['roadside'], env: { CORS_ORIGINS: APP_ORIGIN } }); });
afterAll(async () => { await t?.close(); });

const WATCH = 'subscription { rescueUpdated(reqId: "r-1") { status } }';

/** How a plain WebSocket upgrade to /graphql with these headers is answered: opened, or the HTTP status refusing it. */
const upgrade = (headers: Record<string, string>) => new Promise<number | 'open'>((resolve) => {
  const socket = new WebSocket(`${t.url.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', { headers });
  socket.on('open', () => { socket.close(); resolve('open'); });
  socket.on('unexpected-response', (_req, res) => { resolve(res.statusCode ?? 0); socket.terminate(); });
  socket.on('error', () => undefined);
});

describe('subscriber tokens', () => {
  it('refuses a connection without a token, or with a bad one, with 4401', async () => {
    for (const authorization of [undefined, 'Bearer not-a-jwt', 'Basic abc']) {
      const ws = wsClient(t.url, authorization);
      const watching = ws.subscribe(WATCH);
      expect(await ws.closed).toMatchObject({ code: 4401, reason: expect.stringMatching(/^Unauthorized: /) });
      await expect(watching.ended).resolves.toMatchObject({ code: 4401 });
      ws.dispose();
    }
  });

  it('refuses an SSE subscription without a token (401) or with a bad one (401)', async () => {
    for (const authorization of [undefined, 'Bearer not-a-jwt']) {
      const res = await t.request('POST', '/graphql/stream', { headers: { accept: 'text/event-stream', ...(authorization ? { authorization } : {}) }, body: { query: WATCH } });
      expect(res.status).toBe(401);
      expect(res.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
  });

  it('closes the subscriptions of a client disabled through the admin API with 4401, without waiting for an event', async () => {
    const client = await t.clientFor('org-sub-disabled');
    const ws = wsClient(t.url, `Bearer ${client.token}`);
    const watching = ws.subscribe(WATCH);
    const sse = sseClient(t.url, `Bearer ${client.token}`);
    const streaming = sse.subscribe(WATCH);
    await subscriptionsActive(t.stack.gateway, 2);
    const disabled = await t.request('POST', `${ADMIN_CLIENTS_PATH}/${client.clientId}/disable`, { token: await adminToken(t) });
    expect(disabled.status).toBe(200);
    expect(await ws.closed).toMatchObject({ code: 4401, reason: expect.stringMatching(/^Unauthorized: .*disabled/) });
    await watching.ended;
    // SSE has no close codes: the stream's last result says why it ended.
    expect(await streaming.ended).toBeUndefined();
    expect(streaming.results.at(-1)!.errors![0]!.extensions).toEqual({ code: 'UNAUTHENTICATED', closeCode: 4401 });
    await subscriptionsActive(t.stack.gateway, 0);
    ws.dispose();
    sse.dispose();
  });
});

describe('graphql-sse reserved streams', () => {
  it("belong to the client that reserved them: another client's token cannot open one or send to it", async () => {
    const reserved = await t.request('PUT', '/graphql/stream', { token: t.token });
    expect(reserved.status).toBe(201);
    const stream = reserved.body as string;
    const other = await t.clientFor('org-sub-streams');
    const opened = await t.request('GET', '/graphql/stream', { token: other.token, headers: { accept: 'text/event-stream', 'x-graphql-event-stream-token': stream } });
    expect(opened.status).toBe(404);
    const sent = await t.request('POST', '/graphql/stream', { token: other.token, headers: { 'x-graphql-event-stream-token': stream }, body: { query: WATCH, extensions: { operationId: 'x' } } });
    expect(sent.status).toBe(404);
    expect((await t.request('DELETE', `/graphql/stream?token=${stream}&operationId=x`, { token: other.token })).status).toBe(404);
    expect((await t.request('DELETE', `/graphql/stream?token=${stream}&operationId=x`, { token: t.token })).status).toBe(200);
  });
});

describe('browser access', () => {
  it('opens WebSockets for the same host and CORS_ORIGINS, and refuses other origins before the upgrade', async () => {
    const host = new URL(t.url).host;
    expect(await upgrade({})).toBe('open');
    expect(await upgrade({ origin: `http://${host}` })).toBe('open');
    expect(await upgrade({ origin: APP_ORIGIN })).toBe('open');
    expect(await upgrade({ origin: 'http://elsewhere.example.test' })).toBe(403);
  });

  it('grants CORS to graphql-sse from CORS_ORIGINS, with the single-connection token header', async () => {
    const preflight = await t.request('OPTIONS', '/graphql/stream', { headers: { origin: APP_ORIGIN, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization,x-graphql-event-stream-token' } });
    expect(preflight.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-graphql-event-stream-token');
  });
});

describe('subscriptions elsewhere', () => {
  it('refuses a subscription sent to POST /graphql with 400 naming the transports', async () => {
    const res = await t.graphql(WATCH);
    expect(res.status).toBe(400);
    expect(res.errors![0]).toMatchObject({ message: expect.stringContaining('graphql-ws'), extensions: { code: 'BAD_REQUEST' } });
  });

  it('refuses a subscription sent to a subgraph with 400 instead of a null error', async () => {
    const roadside = t.stack.subgraphs.find((s) => s.name === 'roadside')!;
    const payload = JSON.stringify({ query: WATCH });
    const res = await roadside.app.inject({
      method: 'POST', url: '/graphql', payload,
      headers: { authorization: await internalBearer(t.config, 'roadside', { clientId: DEFAULT_CLIENT.id, orgId: t.org, scopes: ['roadside'] }), 'content-type': 'application/json', [INTERNAL_HOP_HEADER]: signHop(TEST_HOP_KEY, { method: 'POST', target: '/graphql', body: payload }) },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().errors[0].extensions.code).toBe('BAD_REQUEST');
  });

  it('answers a query sent over graphql-ws or graphql-sse with an error naming POST /graphql', async () => {
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    const asked = ws.subscribe('{ vehicleMakes }');
    expect(await asked.ended).toEqual([expect.objectContaining({ message: expect.stringContaining('POST /graphql'), extensions: { code: 'BAD_REQUEST' } })]);
    ws.dispose();
    const res = await t.request('POST', '/graphql/stream', { token: t.token, headers: { accept: 'text/event-stream' }, body: { query: '{ vehicleMakes }' } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toContain('POST /graphql');
  });
});
