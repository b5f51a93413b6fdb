/**
 * Idempotent replays are answers of the route: only a token of the same client holding every scope
 * of the first request's token gets one (else 403, as the route answers), refusals of the caller are
 * never kept in either protocol, a replay keeps the answer's own headers, and an answer carrying a
 * secret (admin client create and rotate, webhook subscription create) is never kept: its retry
 * answers 409 IDEMPOTENT_SECRET_NOT_REPLAYED and does not run again. PGlite, or DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IdempotencyRecord } from '../../gateway/idempotency/entity.ts';
import { requestFingerprint } from '../../gateway/idempotency/request.ts';
import { ABANDONED_AFTER_MS } from '../../gateway/idempotency/store.ts';
import { countRows } from '../support/rows.ts';
import { DEFAULT_CLIENT, startTestStack, type HttpResult, type TestStack } from '../support/stack.ts';

const ADMIN = '/platform/admin/v1/clients';
const HOOKS = '/platform/webhooks/v1/subscriptions';
const USERS = '/shared-mobility-insights/v2/users';
const CREATE_USER = 'mutation CreateUser($zip: ZipCode) { createUser(input: { homeZip: $zip }) { userId homeZip } }';
const CREATE_HOOK = `mutation Hook($input: WebhookSubscriptionInput!) {
  createWebhookSubscription(input: $input) { secret subscription { id } }
}`;

let t: TestStack;
/** The bootstrap client's token with `admin` (it holds every scope, granted only when asked). */
let admin: string;
let keys = 0;
const newKey = () => `authorised-${Date.now().toString(36)}-${++keys}`;

const token = async (id: string, secret: string, scope?: string) => t.request('POST', '/platform/oauth/v1/token', {
  form: { grant_type: 'client_credentials', client_id: id, client_secret: secret, ...(scope ? { scope } : {}) },
});
const tokenOf = async (id: string, secret: string, scope?: string) =>
  (await token(id, secret, scope)).body.access_token as string;

const keyed = (method: string, path: string, key: string, tok: string, body?: unknown) =>
  t.request(method, path, { token: tok, body, headers: { 'idempotency-key': key } });
const gql = (key: string, tok: string, query: string, variables: Record<string, unknown> = {}) =>
  keyed('POST', '/graphql', key, tok, { query, variables });

const rowOf = async (key: string) =>
  (await t.stack.db.orm.em.fork().find(IdempotencyRecord, { key }, { disableIdentityMap: true }))[0];
const clientRow = async (clientId: string) => {
  const { body } = await t.request('GET', ADMIN, { token: admin });
  const clients = body.clients as { clientId: string; secretGeneration: number }[];
  return clients.find((c) => c.clientId === clientId);
};
const defaultOwner = { clientId: DEFAULT_CLIENT.id, organisation: DEFAULT_CLIENT.org };

function expectProblem(res: HttpResult, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code });
  expect(res.headers.get('idempotent-replayed')).toBeNull();
}

function expectGraphqlError(res: HttpResult, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.errors[0].extensions.code).toBe(code);
  expect(res.body.data).toBeUndefined();
  expect(res.headers.get('idempotent-replayed')).toBeNull();
}

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['scoring', 'webhooks'], env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  admin = await tokenOf(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret, 'admin b2b roadside');
}, 300_000);
afterAll(async () => { await t?.close(); });

describe('a replay goes only to a token holding the scopes of the first request', () => {
  it('admin create and rotate: a token of the operator client without `admin` gets 403, not the secret', async () => {
    const createKey = newKey();
    const created = await keyed('POST', ADMIN, createKey, admin, { organisation: 'org-authorised-a' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const rotateKey = newKey();
    const rotated = await keyed('POST', `${ADMIN}/${created.body.clientId}/rotate`, rotateKey, admin);
    expect(rotated.status).toBe(200);

    // t.token: the same client, without `admin` (not asked for).
    const createReplay = await keyed('POST', ADMIN, createKey, t.token, { organisation: 'org-authorised-a' });
    const rotateReplay = await keyed('POST', `${ADMIN}/${created.body.clientId}/rotate`, rotateKey, t.token);
    for (const res of [createReplay, rotateReplay]) {
      expectProblem(res, 403, 'FORBIDDEN');
      expect(res.body.detail).toMatch(/'admin'/);
      expect(JSON.stringify(res.body)).not.toMatch(/clientSecret|whsec_/);
    }
    expect(JSON.stringify(rotateReplay.body)).not.toContain(rotated.body.clientSecret);
  });

  it('any keyed REST write and mutation: a narrower token gets 403 / FORBIDDEN, a token as wide the replay', async () => {
    const client = await t.clientFor('org-authorised-b', ['b2b', 'roadside']);
    const b2b = await tokenOf(client.clientId, client.clientSecret, 'b2b');
    const restKey = newKey();
    const first = await keyed('POST', USERS, restKey, client.token, { homeZip: '60601' });
    expect(first.status).toBe(201);
    const narrow = await keyed('POST', USERS, restKey, b2b, { homeZip: '60601' });
    expectProblem(narrow, 403, 'FORBIDDEN');
    expect(narrow.body.detail).toMatch(/'roadside'/);
    expect(JSON.stringify(narrow.body)).not.toContain(first.body.userId);
    const wide = await tokenOf(client.clientId, client.clientSecret);
    const again = await keyed('POST', USERS, restKey, wide, { homeZip: '60601' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);

    const gqlKey = newKey();
    const mutation = await gql(gqlKey, client.token, CREATE_USER, { zip: '60601' });
    expect(mutation.body.data.createUser.userId).toBeTruthy();
    const refused = await gql(gqlKey, b2b, CREATE_USER, { zip: '60601' });
    expectGraphqlError(refused, 403, 'FORBIDDEN');
    expect(JSON.stringify(refused.body)).not.toContain(mutation.body.data.createUser.userId);
  });

  it('a key taken over after its runner vanished is the taker\'s: replayed to the taker\'s scopes', async () => {
    const store = t.stack.gateway.idempotency;
    const owner = { clientId: 'takeover-client', organisation: 'takeover-org' };
    const key = newKey();
    const start = new Date();
    const wide = await store.claim(owner, { key, fingerprint: 'f', scopes: ['b2b', 'roadside'] }, start);
    expect(wide.kind).toBe('claimed');
    const later = new Date(start.getTime() + ABANDONED_AFTER_MS + 1000);
    const taken = await store.claim(owner, { key, fingerprint: 'f', scopes: ['b2b'] }, later);
    expect(taken).toEqual(wide);
    await store.complete((taken as { id: string }).id, { status: 201, headers: {}, body: Buffer.from('{}') });
    expect((await store.claim(owner, { key, fingerprint: 'f', scopes: ['b2b'] }, later)).kind).toBe('replay');
  });
});

describe('refusals of the caller are never kept', () => {
  it('a GraphQL mutation refused FORBIDDEN is not stored: a token with the scope then runs it for real', async () => {
    const client = await t.clientFor('org-authorised-c', ['b2b', 'roadside']);
    const roadside = await tokenOf(client.clientId, client.clientSecret, 'roadside');
    const key = newKey();
    const refused = await gql(key, roadside, CREATE_USER, { zip: '60602' });
    expect(refused.status).toBe(200);
    expect(refused.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code)).toEqual(['FORBIDDEN']);
    expect(await rowOf(key)).toBeUndefined();
    const users = (await countRows(t.stack))['scoring.User'];
    const ran = await gql(key, client.token, CREATE_USER, { zip: '60602' });
    expect(ran.status).toBe(200);
    expect(ran.headers.get('idempotent-replayed')).toBeNull();
    expect(ran.body.data.createUser).toMatchObject({ homeZip: '60602' });
    expect((await countRows(t.stack))['scoring.User']).toBe(users + 1);
    expect((await rowOf(key))?.state).toBe('done');
  });

  it('REST 403 is not stored either, and neither is an unauthenticated request (no caller, no key taken)', async () => {
    const key = newKey();
    expectProblem(await keyed('POST', ADMIN, key, t.token, { organisation: 'org-authorised-d' }), 403, 'FORBIDDEN');
    expect(await rowOf(key)).toBeUndefined();
    expectProblem(await keyed('POST', USERS, key, 'not-a-token', {}), 401, 'UNAUTHENTICATED');
    expect(await rowOf(key)).toBeUndefined();
  });
});

describe('a replay keeps the answer\'s headers, not the request\'s', () => {
  it('Cache-Control and the answer\'s own headers come back; request id and rate-limit counters are new', async () => {
    const key = newKey();
    const first = await gql(key, t.token, CREATE_USER, { zip: '60603' });
    expect(first.headers.get('cache-control')).toBe('no-store');
    const replay = await gql(key, t.token, CREATE_USER, { zip: '60603' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    for (const name of ['cache-control', 'content-type', 'x-content-type-options', 'content-security-policy']) {
      expect(replay.headers.get(name), name).toBe(first.headers.get(name));
    }
    expect(replay.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    const remaining = (res: HttpResult) => Number(res.headers.get('x-ratelimit-remaining'));
    expect(remaining(replay)).toBeLessThan(remaining(first));
    const stored = (await rowOf(key))!.headers!;
    expect(stored['cache-control']).toBe('no-store');
    for (const name of ['x-request-id', 'x-ratelimit-remaining', 'date', 'vary', 'content-length']) {
      expect(stored, name).not.toHaveProperty(name);
    }
  });

  it('ETag, Link and Content-Disposition of a kept REST answer are replayed', async () => {
    const key = newKey();
    const body = { homeZip: '60604' };
    // A kept answer as a route with those headers would leave it (no POST row sets them yet).
    const answer = await t.request('POST', USERS, { token: t.token, body });
    const headers = {
      'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', etag: '"v1"',
      link: '</next>; rel="next"', 'content-disposition': 'attachment; filename="u.json"',
    };
    const store = t.stack.gateway.idempotency;
    const claim = await store.claim(defaultOwner, {
      key, fingerprint: requestFingerprint('POST', USERS, body), scopes: ['b2b'],
    });
    const kept = Buffer.from(JSON.stringify(answer.body));
    await store.complete((claim as { id: string }).id, { status: 201, headers, body: kept });
    const replay = await keyed('POST', USERS, key, t.token, body);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(answer.body);
    for (const [name, value] of Object.entries(headers)) expect(replay.headers.get(name), name).toBe(value);
  });
});

describe('answers that carry a secret are never kept, and never run twice', () => {
  it('admin create: the retry answers 409 IDEMPOTENT_SECRET_NOT_REPLAYED and creates no second client', async () => {
    const key = newKey();
    const body = { organisation: 'org-authorised-e' };
    const created = await keyed('POST', ADMIN, key, admin, body);
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const row = await rowOf(key);
    expect(row).toMatchObject({ state: 'withheld', bodyCiphertext: null });
    const retry = await keyed('POST', ADMIN, key, admin, body);
    expectProblem(retry, 409, 'IDEMPOTENT_SECRET_NOT_REPLAYED');
    expect(retry.body.field).toBe('Idempotency-Key');
    expect(JSON.stringify(retry.body)).not.toContain(created.body.clientSecret);
    const list = (await t.request('GET', ADMIN, { token: admin })).body.clients as { organisation: string }[];
    expect(list.filter((c) => c.organisation === body.organisation)).toHaveLength(1);
    // The answer of another request under the key is still 422.
    const other = await keyed('POST', ADMIN, key, admin, { organisation: 'org-authorised-f' });
    expectProblem(other, 422, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('rotate: a retry does not rotate again (the secret a caller missed stays valid); a burst rotates once', async () => {
    const rotate = (clientId: string, key: string) => keyed('POST', `${ADMIN}/${clientId}/rotate`, key, admin);
    const client = await t.clientFor('org-authorised-g');
    const key = newKey();
    const rotated = await keyed('POST', `${ADMIN}/${client.clientId}/rotate`, key, admin);
    expect(rotated.status).toBe(200);
    expect((await clientRow(client.clientId))?.secretGeneration).toBe(1);
    expectProblem(await rotate(client.clientId, key), 409, 'IDEMPOTENT_SECRET_NOT_REPLAYED');
    expect((await clientRow(client.clientId))?.secretGeneration).toBe(1);
    expect((await token(client.clientId, rotated.body.clientSecret)).status).toBe(200);

    const burstKey = newKey();
    const answers = await Promise.all(Array.from({ length: 20 }, () => rotate(client.clientId, burstKey)));
    const ran = answers.filter((a) => a.status === 200);
    expect(ran).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect(a.status).toBe(409);
      expect(['CONFLICT', 'IDEMPOTENT_SECRET_NOT_REPLAYED']).toContain(a.body.code);
    }
    expect((await clientRow(client.clientId))?.secretGeneration).toBe(2);
    expect((await token(client.clientId, ran[0].body.clientSecret)).status).toBe(200);
    expectProblem(await rotate(client.clientId, burstKey), 409, 'IDEMPOTENT_SECRET_NOT_REPLAYED');
  });

  it('webhook subscription create, REST and GraphQL: 409 on retry, one subscription; a refused input is replayed', async () => {
    const client = await t.clientFor('org-authorised-h');
    const subscriptions = async () => ((await t.request('GET', HOOKS, { token: client.token })).body.subscriptions as []).length;
    const input = { url: 'http://127.0.0.1:9/hook', eventTypes: ['rescue.cancelled'] };
    const restKey = newKey();
    const created = await keyed('POST', HOOKS, restKey, client.token, input);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_/);
    expect(created.headers.get('cache-control')).toBe('no-store');
    const retry = await keyed('POST', HOOKS, restKey, client.token, input);
    expectProblem(retry, 409, 'IDEMPOTENT_SECRET_NOT_REPLAYED');
    expect(JSON.stringify(retry.body)).not.toContain(created.body.secret);
    expect(await subscriptions()).toBe(1);

    const gqlKey = newKey();
    const variables = { input: { url: 'http://127.0.0.1:9/other', eventTypes: ['RESCUE_CANCELLED'] } };
    const first = await gql(gqlKey, client.token, CREATE_HOOK, variables);
    expect(first.body.data.createWebhookSubscription.secret, JSON.stringify(first.body)).toMatch(/^whsec_/);
    const again = await gql(gqlKey, client.token, CREATE_HOOK, variables);
    expectGraphqlError(again, 409, 'IDEMPOTENT_SECRET_NOT_REPLAYED');
    expect(JSON.stringify(again.body)).not.toContain(first.body.data.createWebhookSubscription.secret);
    expect(await subscriptions()).toBe(2);

    // Nothing ran, no secret: the answer is kept as any other.
    const badKey = newKey();
    const badInput = { url: 'ftp://example.com/hook', eventTypes: ['rescue.cancelled'] };
    const bad = await keyed('POST', HOOKS, badKey, client.token, badInput);
    expect(bad.status).toBe(400);
    const badReplay = await keyed('POST', HOOKS, badKey, client.token, badInput);
    expect(badReplay.headers.get('idempotent-replayed')).toBe('true');
    expect(badReplay.body).toEqual(bad.body);
  });

  it('a secret answer kept before this rule (by an older version) is not shown: 409', async () => {
    const key = newKey();
    const body = { organisation: 'org-authorised-legacy' };
    const store = t.stack.gateway.idempotency;
    const claim = await store.claim(defaultOwner, {
      key, fingerprint: requestFingerprint('POST', ADMIN, body), scopes: ['admin'],
    });
    const secret = { clientId: 'client_legacy', clientSecret: 'legacy-secret-value', organisation: body.organisation, scopes: ['b2b'] };
    await store.complete((claim as { id: string }).id, {
      status: 201, headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from(JSON.stringify(secret)),
    });
    const retry = await keyed('POST', ADMIN, key, admin, body);
    expectProblem(retry, 409, 'IDEMPOTENT_SECRET_NOT_REPLAYED');
    expect(JSON.stringify(retry.body)).not.toContain('legacy-secret-value');
  });
});
