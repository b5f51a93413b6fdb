/**
 * Operating events and subscriptions through the gateway (REST, checked against /openapi.json, and
 * GraphQL): the event listing, PATCH, secret rotation verified with the official Standard Webhooks
 * verifier, the test event, recover, and tenancy (another organisation's ids are 404).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { dispatch, provision, session, status } from '../roadside/helpers.ts';
import { expectDocumentedPayloads } from './payload-schema.ts';
import { startReceiver, waitFor, type Received } from './receiver.ts';

const WH = '/platform/webhooks/v1';
const ENV = {
  WEBHOOK_ALLOW_LOOPBACK: 'true',
  WEBHOOK_POLL_INTERVAL_MS: '50',
  WEBHOOK_RETRY_BASE_MS: '50',
  WEBHOOK_MAX_ATTEMPTS: '2',
  WEBHOOK_BREAKER_FAILURES: '1000',
};

let t: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let other: string;

async function subscribe(path: string, eventTypes = ['rescue.status_changed'], token = t.token) {
  const res = await t.request('POST', `${WH}/subscriptions`, {
    token,
    body: { url: `${receiver.url}${path}`, eventTypes },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; secret: string };
}

async function enRoute() {
  const member = await provision(t, t.token);
  const sessionId = await session(t, t.token, [{ key: 'vin', value: member.vin }]);
  const reqId = (await dispatch(t, t.token, sessionId)).body.requestId as string;
  expect((await status(t, t.token, reqId, 'EN-ROUTE')).status).toBe(200);
  return reqId;
}

const at = (path: string) => () => receiver.received.filter((r) => r.path === path);
/** The requests `path` received, once there are `count`. */
const arrived = (path: string, count: number) =>
  waitFor(() => (at(path)().length >= count ? at(path)() : null), 5_000, `${count} request(s) at ${path}`);
const deliveries = async (id: string, state = '') =>
  (
    await t.request('GET', `${WH}/subscriptions/${id}/deliveries${state && `?status=${state}`}`, {
      token: t.token,
    })
  ).body.deliveries;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['roadside', 'webhooks'], env: ENV });
  receiver = await startReceiver();
  other = (await t.clientFor('org-other')).token;
}, 300_000);
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

describe('events listing', () => {
  it("lists the organisation's events with filters, pages and delivery states, and one by id", async () => {
    const sub = await subscribe('/list');
    const before = new Date().toISOString();
    const reqIds = [await enRoute(), await enRoute(), await enRoute()];
    await waitFor(() => at('/list')().length >= 3, 5_000, 'three deliveries');
    // A delivery is recorded as succeeded just after its receiver answered: list once none is pending.
    const listAll = () => t.request('GET', `${WH}/events?type=rescue.status_changed&from=${before}`, { token: t.token });
    const settled = (events: { deliveries: { pending: number } }[] | undefined) => events?.every((e) => e.deliveries.pending === 0);
    const all = await waitFor(async () => {
      const listed = await listAll();
      return settled(listed.body.events) ? listed : null;
    }, 5_000, 'the three deliveries recorded');
    expect(all.status).toBe(200);
    expect(all.body.events.map((e: { resource: string }) => e.resource)).toEqual(
      reqIds.reverse().map((id) => `rescue:${id}`),
    );
    expect(all.body.events[0]).toMatchObject({
      type: 'rescue.status_changed',
      deliveries: { pending: 0, failed: 0, succeeded: 1 },
    });
    expect(all.body.events[0].data.resource).toMatchObject({ requestId: reqIds[0], status: 'EN-ROUTE' });

    const first = await t.request('GET', `${WH}/events?from=${before}&first=2`, { token: t.token });
    expect(first.body).toMatchObject({ hasNextPage: true });
    const second = await t.request(
      'GET',
      `${WH}/events?from=${before}&first=2&after=${first.body.nextCursor}`,
      { token: t.token },
    );
    const paged = [...first.body.events, ...second.body.events].map((e: { id: string }) => e.id);
    expect(new Set(paged).size).toBe(paged.length);
    expect(paged).toEqual(expect.arrayContaining(all.body.events.map((e: { id: string }) => e.id)));

    const one = await t.request(
      'GET',
      `${WH}/events?resource=rescue:${reqIds[1]}&type=rescue.status_changed`,
      { token: t.token },
    );
    expect(one.body.events).toHaveLength(1);
    const delivered = await t.request('GET', `${WH}/events?deliveryState=DELIVERED&from=${before}`, {
      token: t.token,
    });
    expect(delivered.body.events.map((e: { id: string }) => e.id)).toEqual(
      expect.arrayContaining(all.body.events.map((e: { id: string }) => e.id)),
    );
    const failed = await t.request('GET', `${WH}/events?deliveryState=failed&from=${before}`, {
      token: t.token,
    });
    expect(failed.body.events).toEqual([]);
    const upTo = await t.request('GET', `${WH}/events?to=${before}&from=${before}`, { token: t.token });
    expect(upTo.status).toBe(400);

    const byId = await t.request('GET', `${WH}/events/${all.body.events[0].id}`, { token: t.token });
    expect(byId.body).toEqual(all.body.events[0]);
    const gql = await t.graphql(
      `query($id: ID!) { webhookEvent(id: $id) { id type resource deliveries { succeeded } } }`,
      { id: byId.body.id },
    );
    expect(gql.data.webhookEvent).toEqual({
      id: byId.body.id,
      type: 'RESCUE_STATUS_CHANGED',
      resource: byId.body.resource,
      deliveries: { succeeded: 1 },
    });

    // Another organisation sees none of them.
    expect((await t.request('GET', `${WH}/events/${byId.body.id}`, { token: other })).status).toBe(404);
    expect((await t.request('GET', `${WH}/events?from=${before}`, { token: other })).body.events).toEqual([]);
    await t.request('DELETE', `${WH}/subscriptions/${sub.id}`, { token: t.token });
  });

  it('refuses hostile input with 400 (or 404 for an id that names nothing)', async () => {
    for (const query of [
      'first=0',
      'first=101',
      'first=abc',
      'after=nope',
      `after=${Buffer.from('["x","y"]').toString('base64url')}`,
      'deliveryState=lost',
      'type=webhook.test',
      'type=%00',
      'from=yesterday',
      `resource=${'r'.repeat(301)}`,
      'resource=a%00b',
    ]) {
      const res = await t.request('GET', `${WH}/events?${query}`, { token: t.token });
      expect(res.status, query).toBe(400);
      expect(res.headers.get('content-type'), query).toMatch(/problem\+json/);
    }
    for (const id of ['not-a-uuid', crypto.randomUUID(), `'; drop table webhooks.events; --`]) {
      expect(
        (await t.request('GET', `${WH}/events/${encodeURIComponent(id)}`, { token: t.token })).status,
      ).toBe(404);
    }
    expect((await t.request('GET', `${WH}/events`)).status).toBe(401);
  });
});

describe('subscriptions to operate', () => {
  it("PATCH changes the event types, pauses and resumes, and keeps the receivers' address rules", async () => {
    const sub = await subscribe('/patch', ['rescue.cancelled']);
    const patched = await t.request('PATCH', `${WH}/subscriptions/${sub.id}`, {
      token: t.token,
      body: { eventTypes: ['rescue.status_changed'], paused: true },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: sub.id, eventTypes: ['rescue.status_changed'], paused: true });
    const reqId = await enRoute();
    await waitFor(async () => (await deliveries(sub.id, 'pending')).length === 1, 5_000, 'a held delivery');
    await new Promise((r) => setTimeout(r, 300));
    expect(at('/patch')()).toEqual([]);
    const resumed = await t.request('PATCH', `${WH}/subscriptions/${sub.id}`, {
      token: t.token,
      body: { paused: false },
    });
    expect(resumed.body.paused).toBe(false);
    const [hit] = await arrived('/patch', 1);
    expect(receiver.verify(sub.secret, hit)).toMatchObject({ data: { resource: { requestId: reqId } } });

    for (const body of [
      { url: 'https://10.0.0.1/h' },
      { url: 'http://169.254.169.254/' },
      { url: 'ftp://x' },
      { eventTypes: [] },
      { eventTypes: ['webhook.test'] },
      { paused: 'yes' },
      { paused: null },
      { url: null },
      { extra: 1 },
      {},
    ]) {
      const res = await t.request('PATCH', `${WH}/subscriptions/${sub.id}`, { token: t.token, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const moved = await t.request('PATCH', `${WH}/subscriptions/${sub.id}`, {
      token: t.token,
      body: { url: `${receiver.url}/moved` },
    });
    expect(moved.body.url).toBe(`${receiver.url}/moved`);
    const gql = await t.graphql(
      `mutation($id: ID!) { updateWebhookSubscription(id: $id, input: { eventTypes: [WEBHOOK_TEST] }) { id } }`,
      { id: sub.id },
    );
    expect(gql.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('rotates the secret: during the overlap both the old and the new secret verify; after a rotation without one, only the new', async () => {
    const sub = await subscribe('/rotate');
    const rotated = await t.request('POST', `${WH}/subscriptions/${sub.id}/rotate-secret`, {
      token: t.token,
      body: {},
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(sub.secret);
    const overlapEnds = Date.parse(rotated.body.previousSecretExpiresAt) - Date.now();
    expect(overlapEnds).toBeGreaterThan(86_390_000);
    expect(overlapEnds).toBeLessThanOrEqual(86_400_000);
    await enRoute();
    const [hit] = await arrived('/rotate', 1);
    expect(hit.headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(receiver.verify(sub.secret, hit)).toMatchObject({ type: 'rescue.status_changed' });
    expect(receiver.verify(rotated.body.secret, hit)).toMatchObject({ type: 'rescue.status_changed' });

    const again = await t.request('POST', `${WH}/subscriptions/${sub.id}/rotate-secret`, {
      token: t.token,
      body: { overlapSeconds: 0 },
    });
    expect(again.body.previousSecretExpiresAt).toBeNull();
    await enRoute();
    const second: Received = (await arrived('/rotate', 2))[1];
    expect(second.headers['webhook-signature']).toMatch(/^v1,\S+$/);
    expect(receiver.verify(again.body.secret, second)).toMatchObject({ type: 'rescue.status_changed' });
    expect(() => receiver.verify(rotated.body.secret, second)).toThrow();
    expect(() => receiver.verify(sub.secret, second)).toThrow();

    for (const body of [
      { overlapSeconds: 604_801 },
      { overlapSeconds: -1 },
      { overlapSeconds: 1.5 },
      { overlapSeconds: '60' },
      { other: 1 },
    ]) {
      expect(
        (await t.request('POST', `${WH}/subscriptions/${sub.id}/rotate-secret`, { token: t.token, body }))
          .status,
        JSON.stringify(body),
      ).toBe(400);
    }
  });

  it("never keeps a rotation's answer for an Idempotency-Key", async () => {
    const sub = await subscribe('/idem');
    const headers = { 'idempotency-key': `rotate-${crypto.randomUUID()}` };
    const first = await t.request('POST', `${WH}/subscriptions/${sub.id}/rotate-secret`, {
      token: t.token,
      headers,
      body: {},
    });
    expect(first.status).toBe(200);
    const repeat = await t.request('POST', `${WH}/subscriptions/${sub.id}/rotate-secret`, {
      token: t.token,
      headers,
      body: {},
    });
    expect(repeat.status).toBe(409);
    expect(repeat.body.code).toBe('IDEMPOTENT_SECRET_NOT_REPLAYED');
    expect(JSON.stringify(repeat.body)).not.toContain(first.body.secret);
  });

  it('sends a webhook.test event to that subscription only', async () => {
    const target = await subscribe('/test-target');
    const bystander = await subscribe('/test-bystander');
    const sent = await t.request('POST', `${WH}/subscriptions/${target.id}/test`, { token: t.token });
    expect(sent.status).toBe(202);
    expect(sent.body).toMatchObject({
      eventType: 'webhook.test',
      status: 'PENDING',
      subscriptionId: target.id,
    });
    const [hit] = await arrived('/test-target', 1);
    expect(receiver.verify(target.secret, hit)).toMatchObject({
      type: 'webhook.test',
      data: { path: `${WH}/subscriptions/${target.id}`, resource: { subscriptionId: target.id } },
    });
    expect(hit.headers['webhook-id']).toBe(sent.body.id);
    await new Promise((r) => setTimeout(r, 200));
    expect(at('/test-bystander')()).toEqual([]);
    expect(await deliveries(bystander.id)).toEqual([]);
  });

  it('recovers every failed delivery since an instant, and only those', async () => {
    const sub = await subscribe('/recover');
    receiver.state.status = 500;
    const since = new Date().toISOString();
    await enRoute();
    await enRoute();
    await waitFor(
      async () => (await deliveries(sub.id, 'failed')).length === 2,
      10_000,
      'two failed deliveries',
    );
    const failedEvents = await t.request('GET', `${WH}/events?deliveryState=failed&from=${since}`, {
      token: t.token,
    });
    expect(failedEvents.body.events).toHaveLength(2);
    receiver.state.status = 200;
    const future = await t.request('POST', `${WH}/subscriptions/${sub.id}/recover`, {
      token: t.token,
      body: { since: new Date(Date.now() + 60_000).toISOString() },
    });
    expect(future.status).toBe(400);
    const later = await t.request('POST', `${WH}/subscriptions/${sub.id}/recover`, {
      token: t.token,
      body: { since: new Date().toISOString() },
    });
    expect(later.body).toEqual({ recovered: 0, more: false });
    const recovered = await t.request('POST', `${WH}/subscriptions/${sub.id}/recover`, {
      token: t.token,
      body: { since },
    });
    expect(recovered.status).toBe(202);
    expect(recovered.body).toEqual({ recovered: 2, more: false });
    await waitFor(() => at('/recover')().length === 2, 5_000, 'the recovered deliveries');
    await waitFor(async () => (await deliveries(sub.id, 'succeeded')).length === 2, 5_000, 'both delivered');
    for (const body of [{}, { since: 'yesterday' }, { since: 5 }]) {
      expect(
        (await t.request('POST', `${WH}/subscriptions/${sub.id}/recover`, { token: t.token, body })).status,
        JSON.stringify(body),
      ).toBe(400);
    }
  });

  it("answers 404 for another organisation's subscription on every new operation, and changes nothing", async () => {
    const sub = await subscribe('/tenancy');
    const calls: [string, string, unknown][] = [
      ['PATCH', '', { paused: true }],
      ['POST', '/rotate-secret', {}],
      ['POST', '/test', undefined],
      ['POST', '/recover', { since: new Date(0).toISOString() }],
    ];
    for (const [method, suffix, body] of calls) {
      const res = await t.request(method as 'POST', `${WH}/subscriptions/${sub.id}${suffix}`, {
        token: other,
        body,
      });
      expect(res.status, `${method} ${suffix}`).toBe(404);
    }
    const own = await t.request('GET', `${WH}/subscriptions/${sub.id}`, { token: t.token });
    expect(own.body).toMatchObject({ paused: false, previousSecretExpiresAt: null });
    expect(await deliveries(sub.id)).toEqual([]);
    const gql = await t.graphql(
      `mutation($id: ID!) { sendTestWebhook(id: $id) { id } }`,
      { id: sub.id },
      other,
    );
    expect(gql.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });
});

it("every delivery keeps to the OpenAPI document's webhooks schema of its type (Ajv, JSON Schema 2020-12)", async () => {
  await expectDocumentedPayloads(t, receiver.received, ['webhook.test', 'rescue.status_changed']);
});
