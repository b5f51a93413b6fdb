import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, DEFAULT_CLIENT, sandboxClient, startTestStack, type TestStack } from '../support/stack.ts';
import { pollerWindow } from '../support/idle-poller.ts';
import { dispatch, provision, RS, session } from '../roadside/helpers.ts';
import { startReceiver, waitFor } from '../webhooks/receiver.ts';
import { SANDBOX_PROVIDER_LOCK } from '../../subgraphs/roadside/sandbox/provider.ts';

const ADMIN = '/platform/admin/v1/clients';
const USERS = '/shared-mobility-insights/v2/users';
const RESET = '/platform/sandbox/v1/reset';
const STEP_MS = 150;
const env = { SANDBOX_RESCUE_STEP_MS: String(STEP_MS), SANDBOX_MAX_RECORDS: '20', WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_INTERVAL_MS: '50' };

let t: TestStack;
let admin: string;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['booking', 'scoring', 'roadside', 'registration', 'webhooks'], env });
  admin = await adminToken(t);
  receiver = await startReceiver();
}, 300_000);
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

describe('sandbox organisations', () => {
  it('makes ORG-sandbox on first use, linked to ORG, and refuses sandboxes of sandboxes and live clients in them', async () => {
    const first = await sandboxClient(t, 'org-sbx', admin);
    expect(first).toMatchObject({ organisation: 'org-sbx-sandbox', liveOrganisation: 'org-sbx', sandbox: true });
    expect((await sandboxClient(t, 'org-sbx', admin)).organisation).toBe('org-sbx-sandbox');
    expect((await t.request('POST', ADMIN, { token: admin, body: { organisation: 'org-sbx-sandbox', sandbox: true } })).status).toBe(409);
    expect((await t.request('POST', ADMIN, { token: admin, body: { organisation: 'org-sbx-sandbox' } })).status).toBe(409);
    const listed = (await t.request('GET', ADMIN, { token: admin })).body.clients as { organisation: string; sandbox: boolean }[];
    expect(listed.filter((c) => c.organisation === 'org-sbx-sandbox').every((c) => c.sandbox)).toBe(true);
  });

  it('keeps its data apart from its live organisation, both ways, and marks every answer with X-Sandbox', async () => {
    const sandbox = await sandboxClient(t, DEFAULT_CLIENT.org, admin);
    const mine = await t.request('POST', USERS, { token: sandbox.token, body: {} });
    expect(mine.status).toBe(201);
    expect(mine.headers.get('x-sandbox')).toBe('true');
    const live = await t.request('POST', USERS, { token: t.token, body: {} });
    expect(live.headers.get('x-sandbox')).toBeNull();
    const sandboxId = mine.body.userId as string;
    const liveId = live.body.userId as string;
    const missing = await t.request('GET', `${USERS}/${liveId}`, { token: sandbox.token });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-sandbox')).toBe('true');
    expect((await t.request('GET', `${USERS}/${sandboxId}`, { token: t.token })).status).toBe(404);
    expect((await t.request('GET', `${USERS}/${sandboxId}`, { token: sandbox.token })).status).toBe(200);
    const query = 'query U($id: ID!) { user(userId: $id) { userId } }';
    const graphql = await t.request('POST', '/graphql', { token: sandbox.token, body: { query, variables: { id: liveId } } });
    expect(graphql.headers.get('x-sandbox')).toBe('true');
    expect(graphql.body.data?.user ?? null).toBeNull();
    expect((await t.graphql(query, { id: sandboxId })).data?.user ?? null).toBeNull();
  });

  it('moves a sandbox rescue to COMPLETED on its own, with positions and ETAs, and its webhooks say "sandbox": true', async () => {
    const sandbox = await sandboxClient(t, 'org-rescue', admin);
    const sub = await t.request('POST', '/platform/webhooks/v1/subscriptions', {
      token: sandbox.token, body: { url: `${receiver.url}/sandbox`, eventTypes: ['rescue.status_changed', 'rescue.updated'] },
    });
    expect(sub.status).toBe(201);
    const member = await provision(t, sandbox.token);
    const sessionId = await session(t, sandbox.token, [{ key: 'vin', value: member.vin }]);
    const dispatched = await dispatch(t, sandbox.token, sessionId);
    expect(dispatched.status, JSON.stringify(dispatched.body)).toBe(201);
    const reqId = dispatched.body.requestId as string;
    const started = Date.now();
    const done = await waitFor(async () => {
      const res = await t.request('GET', `${RS}/rescue/reqId/${reqId}`, { token: sandbox.token });
      return res.body.serviceRequest?.status === 'COMPLETED' ? res : null;
    }, 20 * STEP_MS + 10_000, 'the sandbox rescue to complete');
    console.log(`sandbox rescue: dispatch to COMPLETED in ${Date.now() - started} ms at SANDBOX_RESCUE_STEP_MS=${STEP_MS}`);
    const hits = await waitFor(() => {
      const mine = receiver.received.filter((r) => r.path === '/sandbox');
      return mine.some((r) => r.json.data.resource.status === 'COMPLETED') ? mine : null;
    }, 10_000, 'the COMPLETED webhook');
    const statuses = hits.map((r) => r.json.data.resource.status as string);
    expect(statuses.filter((s, i) => s !== statuses[i - 1])).toEqual(['EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED']);
    for (const hit of hits) expect(hit.json.sandbox).toBe(true);
    // The events list says it too, on REST and GraphQL.
    const listed = await t.request('GET', '/platform/webhooks/v1/events?type=rescue.status_changed', { token: sandbox.token });
    expect(listed.body.events.length).toBeGreaterThan(0);
    for (const event of listed.body.events as { sandbox?: boolean }[]) expect(event.sandbox).toBe(true);
    const viaGraph = await t.request('POST', '/graphql', {
      token: sandbox.token, body: { query: '{ webhookEvents(first: 5) { nodes { sandbox } } }' },
    });
    expect(viaGraph.body.data.webhookEvents.nodes).toContainEqual({ sandbox: true });
    // The driver moves from where the provider was dispatched onto the disablement, the ETA shrinking to 0.
    const positions = new Set(hits.map((r) => JSON.stringify(r.json.data.resource.driver.position)));
    expect(positions.size).toBe(4);
    const arrived = hits.find((r) => r.json.data.resource.status === 'ARRIVED_ONSITE')!.json.data.resource;
    const { latitude, longitude } = done.body.serviceRequest.disablementAddress as { latitude: number; longitude: number };
    expect(arrived.driver.position).toEqual({ latitude, longitude });
    expect(arrived.eta).toBe(0);
    expect(hits.filter((r) => r.json.data.resource.status !== 'ARRIVED_ONSITE' && r.json.data.resource.status !== 'COMPLETED')
      .every((r) => r.json.data.resource.eta === 1)).toBe(true);
    // A live organisation's rescue stays where its provider leaves it, and its webhooks carry no sandbox field.
    const liveSub = await t.request('POST', '/platform/webhooks/v1/subscriptions', {
      token: t.token, body: { url: `${receiver.url}/live`, eventTypes: ['rescue.status_changed'] },
    });
    expect(liveSub.status).toBe(201);
    const liveMember = await provision(t, t.token);
    const live = await dispatch(t, t.token, await session(t, t.token, [{ key: 'vin', value: liveMember.vin }]));
    await new Promise((resolve) => setTimeout(resolve, STEP_MS * 4));
    expect((await t.request('GET', `${RS}/rescue/reqId/${live.body.requestId}`, { token: t.token })).body.serviceRequest.status).toBe('BOOKED');
    await t.request('POST', `${RS}/rescue/statusUpdate`, { token: t.token, body: { requestId: live.body.requestId, status: 'EN-ROUTE' } });
    const liveHit = await waitFor(() => receiver.received.find((r) => r.path === '/live'), 10_000, 'the live webhook');
    expect(liveHit.json).not.toHaveProperty('sandbox');
    const liveEvents = await t.request('GET', '/platform/webhooks/v1/events', { token: t.token });
    for (const event of liveEvents.body.events as object[]) expect(event).not.toHaveProperty('sandbox');
  });

  it('bounds what a sandbox holds (SANDBOX_MAX_RECORDS), and not a live organisation', async () => {
    const sandbox = await sandboxClient(t, 'org-quota', admin);
    const statuses: number[] = [];
    for (let i = 0; i < 22; i += 1) statuses.push((await t.request('POST', USERS, { token: sandbox.token, body: {} })).status);
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(201));
    const refused = await t.request('POST', USERS, { token: sandbox.token, body: {} });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'CONFLICT' });
    expect(String(refused.body.detail)).toMatch(/quota of 20/);
    const live = await t.clientFor('org-quota-live', ['b2b']);
    for (let i = 0; i < 22; i += 1) expect((await t.request('POST', USERS, { token: live.token, body: {} })).status).toBe(201);
    // A reset makes room again.
    const reset = await t.request('POST', RESET, { token: sandbox.token });
    expect(reset.status).toBe(200);
    expect(reset.body.deleted.scoring).toBeGreaterThanOrEqual(20);
    expect((await t.request('POST', USERS, { token: sandbox.token, body: {} })).status).toBe(201);
  });

  it('resets a sandbox (REST and GraphQL) with a sandbox token only, its live organisation untouched', async () => {
    const sandbox = await sandboxClient(t, 'org-reset', admin);
    const live = await t.clientFor('org-reset', ['b2b', 'roadside']);
    const own = await t.request('POST', USERS, { token: sandbox.token, body: {} });
    const kept = await t.request('POST', USERS, { token: live.token, body: {} });
    await provision(t, sandbox.token);
    const sub = await t.request('POST', '/platform/webhooks/v1/subscriptions', {
      token: sandbox.token, body: { url: `${receiver.url}/reset`, eventTypes: ['user.updated'] },
    });
    expect(sub.status).toBe(201);
    const refused = await t.request('POST', RESET, { token: live.token });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    const reset = await t.request('POST', RESET, { token: sandbox.token });
    expect(reset.status, JSON.stringify(reset.body)).toBe(200);
    expect(reset.headers.get('x-sandbox')).toBe('true');
    expect(reset.body.deleted).toMatchObject({ booking: 0, registration: 0 });
    expect(reset.body.deleted.scoring).toBeGreaterThanOrEqual(1);
    expect(reset.body.deleted.webhooks).toBeGreaterThanOrEqual(1);
    expect(reset.body.deleted.roadside).toBeGreaterThanOrEqual(2);
    expect((await t.request('GET', `${USERS}/${own.body.userId}`, { token: sandbox.token })).status).toBe(404);
    expect((await t.request('GET', '/platform/webhooks/v1/subscriptions', { token: sandbox.token })).body.subscriptions).toEqual([]);
    expect((await t.request('GET', `${USERS}/${kept.body.userId}`, { token: live.token })).status).toBe(200);
    // The GraphQL mutation, for the areas it selects.
    await t.request('POST', USERS, { token: sandbox.token, body: {} });
    const mutation = 'mutation { resetSandbox { scoring webhooks } }';
    const graphql = await t.request('POST', '/graphql', { token: sandbox.token, body: { query: mutation } });
    expect(graphql.headers.get('x-sandbox')).toBe('true');
    expect(graphql.body.data.resetSandbox.scoring).toBeGreaterThanOrEqual(1);
    expect((await t.request('GET', '/platform/webhooks/v1/subscriptions', { token: sandbox.token })).body.subscriptions).toEqual([]);
    const liveGraphql = await t.request('POST', '/graphql', { token: live.token, body: { query: mutation } });
    expect(liveGraphql.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });
});

describe('an idle sandbox provider', () => {
  it('polls with one probe of the due moves: no transaction, no read of the rescues', async () => {
    const connection = t.stack.subgraphs.find((s) => s.name === 'roadside')!.db.orm.em.getConnection();
    const moving = `select count(*)::int as n from "roadside"."rescues"
      where sandbox and status in ('BOOKED', 'EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE')`;
    for (const end = Date.now() + 60_000; (await connection.execute<{ n: number }[]>(moving))[0]!.n > 0;) {
      if (Date.now() > end) throw new Error('sandbox rescues still moving after a minute');
      await new Promise((r) => setTimeout(r, 100));
    }
    const isProbe = (sql: string) => sql.startsWith('select exists') && sql.includes('"roadside"."rescues" r');
    const isRound = (sql: string, params?: unknown[]) => (sql.includes('"roadside"."rescues" r') && !isProbe(sql))
      || (sql.includes('advisory') && params?.[0] === SANDBOX_PROVIDER_LOCK);
    // The last move's events may still be relayed (a transaction on PostgreSQL): the first 300 ms in
    // which the roadside area did nothing but the provider's polls.
    const window = await pollerWindow(connection, isProbe, isRound);
    expect(window.work).toEqual([]);
    expect(window.began).toBe(false);
  });
});
