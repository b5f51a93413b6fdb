import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { dispatch, provision, RS, session, status } from '../roadside/helpers.ts';
import { expectDocumentedPayloads } from './payload-schema.ts';
import { startReceiver, waitFor } from './receiver.ts';

const WH = '/platform/webhooks/v1';
const FAST = { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_INTERVAL_MS: '50', WEBHOOK_RETRY_BASE_MS: '100', WEBHOOK_MAX_ATTEMPTS: '9' };

let t: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

async function subscribe(token: string, url: string, eventTypes = ['rescue.status_changed', 'rescue.cancelled']) {
  const res = await t.request('POST', `${WH}/subscriptions`, { token, body: { url, eventTypes } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; secret: string; url: string; eventTypes: string[] };
}

async function newRescue(token = t.token) {
  const member = await provision(t, token);
  const sessionId = await session(t, token, [{ key: 'vin', value: member.vin }]);
  const res = await dispatch(t, token, sessionId);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.requestId as string;
}

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['roadside', 'webhooks'], env: FAST });
  receiver = await startReceiver();
}, 300_000);
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

describe('webhooks: delivery of rescue events', () => {
  it('delivers a signed, verifiable event within a second of a status change', async () => {
    const sub = await subscribe(t.token, `${receiver.url}/first`);
    expect(sub.secret).toMatch(/^whsec_/);
    const reqId = await newRescue();
    const changed = Date.now();
    expect((await status(t, t.token, reqId, 'EN-ROUTE')).status).toBe(200);
    const hit = await waitFor(() => receiver.received.find((r) => r.path === '/first'), 1_000, 'the webhook');
    console.log(`webhook latency after the status change answered: ${hit.at - changed} ms`);
    const verified = receiver.verify(sub.secret, hit) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(verified.type).toBe('rescue.status_changed');
    expect(hit.headers['webhook-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(() => receiver.verify('whsec_' + Buffer.alloc(32, 1).toString('base64'), hit)).toThrow();
    const resource = verified.data.resource;
    expect(verified.data.path).toBe(`${RS}/rescue/reqId/${reqId}`);
    expect(resource).toMatchObject({ requestId: reqId, status: 'EN-ROUTE', previousStatus: 'BOOKED' });
    // The resource as its REST path returns it.
    const rest = await t.request('GET', `${RS}/rescue/reqId/${reqId}`, { token: t.token });
    const { previousStatus, eta, etaTime, ...same } = resource;
    const { eta: restEta, etaTime: restEtaTime, ...restSame } = rest.body.serviceRequest;
    expect(previousStatus).toBe('BOOKED');
    expect(same).toEqual(restSame);
    expect(Math.abs(eta - restEta)).toBeLessThanOrEqual(1);
    expect(etaTime).toBe(restEtaTime);
    // The delivery log says so too.
    const log = await t.request('GET', `${WH}/subscriptions/${sub.id}/deliveries`, { token: t.token });
    expect(log.status).toBe(200);
    expect(log.body.deliveries).toHaveLength(1);
    expect(log.body.deliveries[0]).toMatchObject({ id: hit.headers['webhook-id'], status: 'SUCCEEDED', attempts: 1, eventType: 'rescue.status_changed' });
    expect(log.body.deliveries[0].payload).toEqual(verified);
    await t.request('DELETE', `${WH}/subscriptions/${sub.id}`, { token: t.token });
  });

  it('a receiver down for a while then back gets every event, in order', async () => {
    const sub = await subscribe(t.token, `${receiver.url}/order`);
    const reqId = await newRescue();
    receiver.state.status = 503;
    for (const next of ['EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED']) {
      expect((await status(t, t.token, reqId, next)).status).toBe(200);
    }
    await waitFor(async () => {
      const log = await t.request('GET', `${WH}/subscriptions/${sub.id}/deliveries?status=pending`, { token: t.token });
      return log.body.deliveries.some((d: { attempts: number }) => d.attempts >= 2);
    }, 10_000, 'failed attempts while the receiver is down');
    receiver.state.status = 200;
    const hits = await waitFor(() => {
      const mine = receiver.received.filter((r) => r.path === '/order');
      return mine.length >= 4 ? mine : null;
    }, 20_000, 'the four events');
    expect(hits.map((h) => h.json.data.resource.status)).toEqual(['EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED']);
    for (const hit of hits) expect(receiver.verify(sub.secret, hit)).toBeTruthy();
    const log = await t.request('GET', `${WH}/subscriptions/${sub.id}/deliveries`, { token: t.token });
    expect(log.body.deliveries.every((d: { status: string }) => d.status === 'SUCCEEDED')).toBe(true);
    const first = log.body.deliveries.find((d: { payload: { data: { resource: { status: string } } } }) => d.payload.data.resource.status === 'EN-ROUTE');
    expect(first.attempts).toBeGreaterThan(1);
    expect(first.attemptLog.slice(0, -1).every((a: { responseStatus: number }) => a.responseStatus === 503)).toBe(true);
    await t.request('DELETE', `${WH}/subscriptions/${sub.id}`, { token: t.token });
  });

  it('cancellation sends rescue.status_changed then rescue.cancelled; a subscription gets only its types', async () => {
    const all = await subscribe(t.token, `${receiver.url}/cancel-all`);
    const only = await subscribe(t.token, `${receiver.url}/cancel-only`, ['rescue.cancelled']);
    const reqId = await newRescue();
    const res = await t.request('POST', `${RS}/rescue/reqId/${reqId}/cancel`, { token: t.token, body: { reason: 'changed plans' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const both = await waitFor(() => {
      const mine = receiver.received.filter((r) => r.path === '/cancel-all');
      return mine.length >= 2 ? mine : null;
    }, 5_000, 'two events');
    expect(both.map((h) => h.json.type)).toEqual(['rescue.status_changed', 'rescue.cancelled']);
    expect(both[1].json.data.resource).toMatchObject({ requestId: reqId, status: 'CANCELLED', cancelReason: 'changed plans' });
    // Once done (no ETA left), the payload but previousStatus is the rescue as its REST path returns it, every field.
    const { previousStatus, ...resource } = both[1].json.data.resource;
    const rest = await t.request('GET', `${RS}/rescue/reqId/${reqId}`, { token: t.token });
    expect(previousStatus).toBe('BOOKED');
    expect(resource).toEqual(rest.body.serviceRequest);
    const one = await waitFor(() => receiver.received.filter((r) => r.path === '/cancel-only').at(0), 5_000, 'the cancel event');
    expect(one.json.type).toBe('rescue.cancelled');
    expect(receiver.received.filter((r) => r.path === '/cancel-only')).toHaveLength(1);
    for (const s of [all, only]) await t.request('DELETE', `${WH}/subscriptions/${s.id}`, { token: t.token });
  });

  it('a position or ETA the provider reports without a status change is rescue.updated; a refused report sends nothing', async () => {
    const both = await subscribe(t.token, `${receiver.url}/moves-all`, ['rescue.status_changed', 'rescue.updated']);
    const statuses = await subscribe(t.token, `${receiver.url}/moves-status`, ['rescue.status_changed']);
    const reqId = await newRescue();
    const position = { latitude: 41.8, longitude: -87.7 };
    expect((await status(t, t.token, reqId, 'EN-ROUTE')).status).toBe(200);
    expect((await status(t, t.token, reqId, 'EN-ROUTE', position)).status).toBe(200);
    expect((await status(t, t.token, reqId, 'EN-ROUTE', { updatedETA: 7 })).status).toBe(200);
    expect((await status(t, t.token, reqId, 'COMPLETED')).status).toBe(409);
    expect((await status(t, t.token, reqId, 'APPROACHING')).status).toBe(200);
    const hits = await waitFor(() => {
      const mine = receiver.received.filter((r) => r.path === '/moves-all');
      return mine.length >= 4 ? mine : null;
    }, 5_000, 'four events');
    expect(hits.map((h) => [h.json.type, h.json.data.resource.status, h.json.data.resource.previousStatus])).toEqual([
      ['rescue.status_changed', 'EN-ROUTE', 'BOOKED'], ['rescue.updated', 'EN-ROUTE', 'EN-ROUTE'],
      ['rescue.updated', 'EN-ROUTE', 'EN-ROUTE'], ['rescue.status_changed', 'APPROACHING', 'EN-ROUTE'],
    ]);
    expect(hits[1].json.data.resource.driver.position).toEqual(position);
    expect(hits[2].json.data.resource.eta).toBe(7);
    const changes = await waitFor(() => {
      const mine = receiver.received.filter((r) => r.path === '/moves-status');
      return mine.some((h) => h.json.data.resource.status === 'APPROACHING') ? mine : null;
    }, 5_000, 'the APPROACHING event');
    expect(changes.map((h) => h.json.type)).toEqual(['rescue.status_changed', 'rescue.status_changed']);
    for (const s of [both, statuses]) await t.request('DELETE', `${WH}/subscriptions/${s.id}`, { token: t.token });
  });
});

it('every delivery keeps to the OpenAPI document\'s webhooks schema of its type (Ajv, JSON Schema 2020-12)', async () => {
  await expectDocumentedPayloads(t, receiver.received, ['rescue.status_changed', 'rescue.updated', 'rescue.cancelled']);
});

describe('webhooks: subscriptions API', () => {
  it('lists, gets and deletes; the secret is shown only at creation', async () => {
    const sub = await subscribe(t.token, `${receiver.url}/crud`, ['booking.started']);
    const list = await t.request('GET', `${WH}/subscriptions`, { token: t.token });
    expect(list.status).toBe(200);
    expect(list.body.subscriptions.map((s: { id: string }) => s.id)).toContain(sub.id);
    expect(JSON.stringify(list.body)).not.toContain(sub.secret);
    const one = await t.request('GET', `${WH}/subscriptions/${sub.id}`, { token: t.token });
    expect(one.body).toMatchObject({ id: sub.id, url: `${receiver.url}/crud`, eventTypes: ['booking.started'] });
    expect(one.body.secret).toBeUndefined();
    expect((await t.request('DELETE', `${WH}/subscriptions/${sub.id}`, { token: t.token })).status).toBe(204);
    expect((await t.request('GET', `${WH}/subscriptions/${sub.id}`, { token: t.token })).status).toBe(404);
    expect((await t.request('DELETE', `${WH}/subscriptions/${sub.id}`, { token: t.token })).status).toBe(404);
    expect((await t.request('GET', `${WH}/subscriptions/not-a-uuid`, { token: t.token })).status).toBe(404);
  });

  it('refuses receiver URLs outside https or loopback, and private or link-local addresses', async () => {
    const refused = [
      'http://example.com/hook', 'ftp://127.0.0.1/hook', 'https://10.0.0.7/hook', 'https://192.168.1.20/hook', 'https://172.16.5.4/hook',
      'https://169.254.169.254/latest/meta-data', 'https://[fe80::1]/hook', 'https://[fd00::1]/hook', 'https://[::ffff:10.0.0.1]/hook',
      'https://0.0.0.0/hook', 'https://user:pw@127.0.0.1/hook', 'not a url', `https://a.example/${'x'.repeat(2100)}`,
    ];
    for (const url of refused) {
      const res = await t.request('POST', `${WH}/subscriptions`, { token: t.token, body: { url, eventTypes: ['mvr.created'] } });
      expect(res.status, url).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    }
    const badType = await t.request('POST', `${WH}/subscriptions`, { token: t.token, body: { url: `${receiver.url}/x`, eventTypes: ['rescue.exploded'] } });
    expect(badType.status).toBe(400);
    expect((await t.request('POST', `${WH}/subscriptions`, { token: t.token, body: { url: `${receiver.url}/x`, eventTypes: [] } })).status).toBe(400);
    expect((await t.request('POST', `${WH}/subscriptions`, { body: { url: `${receiver.url}/x`, eventTypes: ['mvr.created'] } })).status).toBe(401);
    const list = await t.request('GET', `${WH}/subscriptions`, { token: t.token });
    expect(list.body.subscriptions).toEqual([]);
  });

  it('bounds the subscriptions of an organisation', async () => {
    const org = await t.clientFor('org-webhooks-many');
    for (let i = 0; i < 25; i += 1) {
      const res = await t.request('POST', `${WH}/subscriptions`, { token: org.token, body: { url: `${receiver.url}/many-${i}`, eventTypes: ['mvr.created'] } });
      expect(res.status).toBe(201);
    }
    const over = await t.request('POST', `${WH}/subscriptions`, { token: org.token, body: { url: `${receiver.url}/many-25`, eventTypes: ['mvr.created'] } });
    expect(over.status).toBe(409);
    expect((await t.request('GET', `${WH}/subscriptions`, { token: org.token })).body.subscriptions).toHaveLength(25);
  });

  it('works through GraphQL too', async () => {
    const created = await t.graphql('mutation($input: WebhookSubscriptionInput!) { createWebhookSubscription(input: $input) { secret subscription { id url eventTypes } } }',
      { input: { url: `${receiver.url}/gql`, eventTypes: ['MVR_CREATED', 'CONSENT_CHANGED'] } });
    expect(created.errors).toBeUndefined();
    const id = created.data.createWebhookSubscription.subscription.id;
    expect(created.data.createWebhookSubscription.subscription.eventTypes).toEqual(['MVR_CREATED', 'CONSENT_CHANGED']);
    const listed = await t.graphql('{ webhookSubscriptions { id } }');
    expect(listed.data.webhookSubscriptions.map((s: { id: string }) => s.id)).toContain(id);
    const bad = await t.graphql('mutation { createWebhookSubscription(input: { url: "https://10.1.2.3/", eventTypes: [MVR_CREATED] }) { secret } }');
    expect(bad.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    const deleted = await t.graphql(`mutation { deleteWebhookSubscription(id: "${id}") }`);
    expect(deleted.data.deleteWebhookSubscription).toBe(true);
  });
});

describe('webhooks: tenancy', () => {
  it('an organisation never receives another\'s events, nor sees its subscriptions or deliveries', async () => {
    const b = await t.clientFor('org-webhooks-b');
    const subA = await subscribe(t.token, `${receiver.url}/tenant-a`);
    const subB = await subscribe(b.token, `${receiver.url}/tenant-b`);
    const reqA = await newRescue();
    const reqB = await newRescue(b.token);
    expect((await status(t, t.token, reqA, 'EN-ROUTE')).status).toBe(200);
    expect((await status(t, b.token, reqB, 'EN-ROUTE')).status).toBe(200);
    await waitFor(() => receiver.received.some((r) => r.path === '/tenant-a') && receiver.received.some((r) => r.path === '/tenant-b'), 5_000, 'both events');
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received.filter((r) => r.path === '/tenant-a').map((r) => r.json.data.resource.requestId)).toEqual([reqA]);
    expect(receiver.received.filter((r) => r.path === '/tenant-b').map((r) => r.json.data.resource.requestId)).toEqual([reqB]);
    const logA = await t.request('GET', `${WH}/subscriptions/${subA.id}/deliveries`, { token: t.token });
    const deliveryA = logA.body.deliveries[0].id;
    for (const [method, path] of [
      ['GET', `${WH}/subscriptions/${subA.id}`], ['DELETE', `${WH}/subscriptions/${subA.id}`], ['GET', `${WH}/subscriptions/${subA.id}/deliveries`],
      ['GET', `${WH}/subscriptions/${subA.id}/deliveries/${deliveryA}`], ['POST', `${WH}/subscriptions/${subA.id}/deliveries/${deliveryA}/retry`],
      ['POST', `${WH}/subscriptions/${subB.id}/deliveries/${deliveryA}/retry`],
    ]) {
      expect((await t.request(method, path, { token: b.token })).status, `${method} ${path}`).toBe(404);
    }
    const listB = await t.request('GET', `${WH}/subscriptions`, { token: b.token });
    expect(listB.body.subscriptions.map((s: { id: string }) => s.id)).toEqual([subB.id]);
    expect((await t.request('GET', `${WH}/subscriptions/${subA.id}`, { token: t.token })).status).toBe(200);
  });
});
