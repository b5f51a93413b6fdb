import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { dispatch, provision, session, status } from '../roadside/helpers.ts';
import { startReceiver, waitFor } from './receiver.ts';

const WH = '/platform/webhooks/v1';

let t: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** A receiver that reads each request and never answers: what it holds open, and what was given up on. */
const hanging = { open: new Set<IncomingMessage>(), abandoned: 0 };
const hangingServer = createServer((req) => {
  hanging.open.add(req);
  req.resume();
  req.socket.on('close', () => { if (hanging.open.delete(req)) hanging.abandoned += 1; });
});
let hangingUrl: string;
/** A receiver that always answers 503, counting the attempts. */
const failing = { hits: 0 };
const failingServer = createServer((req, res) => {
  failing.hits += 1;
  req.resume();
  req.on('end', () => res.writeHead(503).end());
});
let failingUrl: string;

beforeAll(async () => {
  t = await startTestStack({
    subgraphs: ['roadside', 'webhooks'],
    // An attempt waits for its receiver as long as the configuration allows.
    env: { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_TIMEOUT_MS: '30000', WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_BREAKER_FAILURES: '3' },
  });
  receiver = await startReceiver();
  await new Promise<void>((resolve) => hangingServer.listen(0, '127.0.0.1', resolve));
  hangingUrl = `http://127.0.0.1:${(hangingServer.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => failingServer.listen(0, '127.0.0.1', resolve));
  failingUrl = `http://127.0.0.1:${(failingServer.address() as AddressInfo).port}`;
}, 300_000);
afterAll(async () => {
  await t?.close();
  hangingServer.closeAllConnections();
  await new Promise((resolve) => hangingServer.close(resolve));
  failingServer.closeAllConnections();
  await new Promise((resolve) => failingServer.close(resolve));
  await receiver?.close();
});

async function subscribe(token: string, url: string) {
  const res = await t.request('POST', `${WH}/subscriptions`, { token, body: { url, eventTypes: ['rescue.status_changed'] } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string };
}

async function enRoute(token: string) {
  const member = await provision(t, token);
  const reqId = (await dispatch(t, token, await session(t, token, [{ key: 'vin', value: member.vin }]))).body.requestId as string;
  expect((await status(t, token, reqId, 'EN-ROUTE')).status).toBe(200);
  return reqId;
}

it("another organisation's delivery arrives while one organisation's 25 receivers hang", async () => {
  const a = await t.clientFor('org-fair-a');
  const subsA = [];
  for (let i = 0; i < 25; i += 1) subsA.push(await subscribe(a.token, `${hangingUrl}/a-${i}`));
  // Four events of four resources: 100 deliveries that could all go at once.
  for (let i = 0; i < 4; i += 1) await enRoute(a.token);
  await waitFor(() => hanging.open.size > 0, 30_000, "organisation A's deliveries to be under way");

  await subscribe(t.token, `${receiver.url}/fair-b`);
  const reqB = await enRoute(t.token);
  const hit = await waitFor(() => receiver.received.find((r) => r.path === '/fair-b'), 60_000, "organisation B's delivery");
  expect(hit.json.data.resource.requestId).toBe(reqB);

  // When B's event arrived, every attempt to A's receivers was still hanging: none had been given up on.
  expect(hanging.abandoned).toBe(0);
  expect(hanging.open.size).toBeGreaterThan(0);
  for (const sub of subsA) {
    const log = await t.request('GET', `${WH}/subscriptions/${sub.id}/deliveries`, { token: a.token });
    for (const delivery of log.body.deliveries) expect(delivery).toMatchObject({ status: 'PENDING', attempts: 0 });
  }
}, 180_000);

it('pauses a subscription whose receiver keeps failing (circuit breaker), while the organisation\'s other receivers get theirs', async () => {
  const org = await t.clientFor('org-breaker');
  const broken = await subscribe(org.token, `${failingUrl}/broken`);
  await subscribe(org.token, `${receiver.url}/healthy`);
  for (let i = 0; i < 5; i += 1) await enRoute(org.token);
  const paused = await waitFor(async () => (await t.request('GET', `${WH}/subscriptions/${broken.id}`, { token: org.token })).body.pausedUntil, 30_000, 'the breaker to open');
  expect(Date.parse(paused)).toBeGreaterThan(Date.now());
  const hitsWhenPaused = failing.hits;
  const deliveries = async () => (await t.request('GET', `${WH}/subscriptions/${broken.id}/deliveries`, { token: org.token })).body.deliveries as
    { status: string; attempts: number; nextAttemptAt: string }[];
  // Its retries come due (100 ms x 4^n) while it is paused; events of the healthy receiver still arrive meanwhile.
  await waitFor(async () => (await deliveries()).every((d) => Date.parse(d.nextAttemptAt) < Date.now()), 30_000, 'the retries to come due');
  const last = await enRoute(org.token);
  await waitFor(() => receiver.received.some((r) => r.path === '/healthy' && r.json.data.resource.requestId === last), 30_000, 'the healthy receiver\'s event');
  expect(failing.hits).toBe(hitsWhenPaused);
  expect(hitsWhenPaused).toBeGreaterThanOrEqual(3);
  expect((await deliveries()).every((d) => d.status === 'PENDING')).toBe(true);
}, 180_000);
