import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { testDatabase } from '../support/database.ts';
import { dispatch, provision, session, status } from '../roadside/helpers.ts';
import { testBus } from './bus-env.ts';
import { startReceiver, waitFor } from './receiver.ts';

const WH = '/platform/webhooks/v1';

let dataDir: string;
let database: Awaited<ReturnType<typeof testDatabase>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let bus: Awaited<ReturnType<typeof testBus>>;
let t: TestStack | undefined;

/** A stack over the same data every time (a PGlite folder, or one PostgreSQL database and one nats-server), as a restarted server sees it. */
async function start(env: Record<string, string>) {
  const store: Record<string, string> = database.env.DATABASE_URL ? { DATABASE_URL: database.env.DATABASE_URL } : { PGLITE_IN_MEMORY: 'false', DATA_DIR: dataDir };
  t = await startTestStack({ subgraphs: ['roadside', 'webhooks'], env: { ...store, ...bus.env, WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_RETRY_BASE_MS: '100', ...env } });
  return t;
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'frg-webhooks-restart-'));
  database = await testDatabase();
  bus = await testBus();
  receiver = await startReceiver();
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await bus?.close();
  await database?.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const deliveries = async (stack: TestStack, id: string, query = '') =>
  (await stack.request('GET', `${WH}/subscriptions/${id}/deliveries${query}`, { token: stack.token })).body.deliveries as {
    id: string; status: string; attempts: number; payload: { data: { resource: { status: string } } };
  }[];

it('loses nothing across restarts: deliveries recorded while nothing sends, and deliveries still pending, arrive in order', async () => {
  // 1. The change is committed while no process sends: its delivery is recorded and waits.
  let stack = await start({ WEBHOOK_WORKER: 'false' });
  const sub = (await stack.request('POST', `${WH}/subscriptions`, { token: stack.token, body: { url: `${receiver.url}/restart`, eventTypes: ['rescue.status_changed'] } })).body;
  const member = await provision(stack, stack.token);
  const reqId = (await dispatch(stack, stack.token, await session(stack, stack.token, [{ key: 'vin', value: member.vin }]))).body.requestId;
  expect((await status(stack, stack.token, reqId, 'EN-ROUTE')).status).toBe(200);
  const [waiting] = await waitFor(async () => {
    const log = await deliveries(stack, sub.id);
    return log.length ? log : null;
  }, 10_000, 'the recorded delivery');
  expect(waiting).toMatchObject({ status: 'PENDING', attempts: 0 });
  await new Promise((r) => setTimeout(r, 300));
  expect((await deliveries(stack, sub.id)).map((d) => d.attempts)).toEqual([0]);
  expect(receiver.received).toEqual([]);
  await stack.close();
  t = undefined;

  // 2. Restarted with the receiver down: the delivery is attempted and retried; a second change queues behind it.
  receiver.state.status = 503;
  stack = await start({});
  await waitFor(async () => (await deliveries(stack, sub.id)).some((d) => d.attempts >= 1), 10_000, 'a failed attempt');
  expect((await status(stack, stack.token, reqId, 'APPROACHING')).status).toBe(200);
  await waitFor(async () => (await deliveries(stack, sub.id)).length === 2, 10_000, 'the second delivery');
  expect(receiver.received.filter((r) => r.path === '/restart')).toEqual([]);
  await stack.close();
  t = undefined;

  // 3. Restarted again with the receiver back: both arrive, in order, each once.
  receiver.state.status = 200;
  stack = await start({});
  const hits = await waitFor(() => {
    const mine = receiver.received.filter((r) => r.path === '/restart');
    return mine.length >= 2 ? mine : null;
  }, 15_000, 'both events');
  expect(hits.map((h) => h.json.data.resource.status)).toEqual(['EN-ROUTE', 'APPROACHING']);
  for (const hit of hits) expect(receiver.verify(sub.secret, hit)).toBeTruthy();
  const log = await deliveries(stack, sub.id);
  expect(log.map((d) => d.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
  await new Promise((r) => setTimeout(r, 300));
  expect(receiver.received.filter((r) => r.path === '/restart')).toHaveLength(2);
}, 600_000);

it('marks a delivery FAILED after the last attempt, and sends it again on retry', async () => {
  await t?.close();
  const stack = await start({ WEBHOOK_MAX_ATTEMPTS: '3', WEBHOOK_RETRY_BASE_MS: '50' });
  const sub = (await stack.request('POST', `${WH}/subscriptions`, { token: stack.token, body: { url: `${receiver.url}/failing`, eventTypes: ['rescue.status_changed'] } })).body;
  receiver.state.status = 500;
  const member = await provision(stack, stack.token);
  const reqId = (await dispatch(stack, stack.token, await session(stack, stack.token, [{ key: 'vin', value: member.vin }]))).body.requestId;
  expect((await status(stack, stack.token, reqId, 'EN-ROUTE')).status).toBe(200);
  const [failed] = await waitFor(async () => {
    const log = await deliveries(stack, sub.id, '?status=failed');
    return log.length ? log : null;
  }, 10_000, 'the delivery to fail');
  const one = await stack.request('GET', `${WH}/subscriptions/${sub.id}/deliveries/${failed.id}`, { token: stack.token });
  expect(one.body).toMatchObject({ status: 'FAILED', attempts: 3, lastResponseStatus: 500, nextAttemptAt: null });
  expect(one.body.attemptLog.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([500, 500, 500]);

  receiver.state.status = 200;
  const retried = await stack.request('POST', `${WH}/subscriptions/${sub.id}/deliveries/${failed.id}/retry`, { token: stack.token });
  expect(retried.status).toBe(202);
  expect(retried.body).toMatchObject({ id: failed.id, status: 'PENDING', attempts: 0 });
  const hit = await waitFor(() => receiver.received.find((r) => r.path === '/failing'), 5_000, 'the replayed delivery');
  expect(hit.headers['webhook-id']).toBe(failed.id);
  expect(receiver.verify(sub.secret, hit)).toBeTruthy();
  await waitFor(async () => (await deliveries(stack, sub.id, '?status=succeeded')).length === 1, 5_000, 'SUCCEEDED');
  const unknown = await stack.request('POST', `${WH}/subscriptions/${sub.id}/deliveries/00000000-0000-4000-8000-000000000000/retry`, { token: stack.token });
  expect(unknown.status).toBe(404);
}, 300_000);
