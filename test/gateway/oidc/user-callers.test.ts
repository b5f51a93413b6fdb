/**
 * An end user's token through the graph: the organisation its issuer registration names (whatever
 * the token claims), the scopes mapped from its claims, the user as the owner of its Idempotency-Keys
 * and rate-limit counts, and each issuer registration's own limit over all its users.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestIssuer, type TestIssuer } from '../../support/oidc-issuer.ts';
import { wsClient } from '../../support/subscriptions.ts';
import { adminToken, startTestStack, type TestStack } from '../../support/stack.ts';

const USERS = '/shared-mobility-insights/v2/users';
const ROADSIDE = '/services/roadside/v1/vehicle/makes';
const PER_USER = 12;
const PER_ISSUER = 20;
let t: TestStack;
let issuer: TestIssuer;
let admin: string;

const trust = async (organisation: string, audience: string, extra: Record<string, unknown> = {}) => {
  const res = await t.request('POST', '/platform/admin/v1/issuers', { token: admin, body: { issuer: issuer.url, organisation, audience, ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
};
const userToken = (sub: string, aud = 'fleet-app', claims: Record<string, unknown> = {}) => issuer.sign({ sub, aud, ...claims });

beforeAll(async () => {
  t = await startTestStack({
    subgraphs: ['scoring'],
    env: {
      OIDC_ALLOW_LOOPBACK: 'true', RATE_LIMIT_PER_MINUTE: String(PER_USER), ISSUER_RATE_LIMIT_PER_MINUTE: String(PER_ISSUER),
      SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT: '1',
    },
  });
  admin = await adminToken(t);
  issuer = await startTestIssuer();
  await trust('org-a', 'fleet-app', { scopesClaim: 'roles', scopeMap: { dispatcher: ['roadside'] }, scopes: ['b2b'] });
  await trust('org-b', 'org-b-app');
  await trust('org-a', 'limits');
}, 240_000);
afterAll(async () => {
  await t?.close();
  await issuer?.close();
});

describe("an end user's requests", () => {
  it("act in the registration's organisation, never the one a claim names", async () => {
    const ann = await userToken('ann@example.com', 'fleet-app', { org: 'org-b' });
    const created = await t.request('POST', USERS, { token: ann, body: { userId: 'driver-of-ann' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    // org-a's own client sees it; org-b's issuer and org-b's clients do not.
    expect((await t.request('GET', `${USERS}/driver-of-ann`, { token: t.token })).status).toBe(200);
    expect((await t.request('GET', `${USERS}/driver-of-ann`, { token: await userToken('bob', 'org-b-app') })).status).toBe(404);
    expect((await t.request('GET', `${USERS}/driver-of-ann`, { token: (await t.clientFor('org-b')).token })).status).toBe(404);
    const graph = await t.graphql('query { user(userId: "driver-of-ann") { userId } }', undefined, await userToken('carl', 'org-b-app'));
    expect(graph.data?.user ?? null).toBeNull();
  });

  it('get the scopes their registration maps from their claims', async () => {
    const plain = await t.request('GET', ROADSIDE, { token: await userToken('dana') });
    expect(plain).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    // Mapped to roadside: past the scope check (the roadside service is not started here).
    const dispatcher = await t.request('GET', ROADSIDE, { token: await userToken('erin', 'fleet-app', { roles: ['dispatcher', 'unknown-role'] }) });
    expect(dispatcher.status).not.toBe(403);
    expect(dispatcher.status).not.toBe(401);
  });

  it("own their Idempotency-Keys: one user's key replays for that user only", async () => {
    const [frank, gina] = await Promise.all([userToken('frank'), userToken('gina')]);
    const send = (token: string) => t.request('POST', USERS, { token, body: {}, headers: { 'idempotency-key': '"same-key"' } });
    const first = await send(frank);
    expect(first.status).toBe(201);
    const replay = await send(frank);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    const other = await send(gina);
    expect(other.status).toBe(201);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(other.body).not.toEqual(first.body);
  });
});

describe('subscription places', () => {
  it("are each user's: a second user of the registration connects, the first user's second connection is refused", async () => {
    const up = (ws: ReturnType<typeof wsClient>) => new Promise<void>((resolve) => { ws.client.on('connected', () => resolve()); });
    const lena = wsClient(t.url, `Bearer ${await userToken('lena@example.com')}`);
    await up(lena);
    const mona = wsClient(t.url, `Bearer ${await userToken('mona@example.com')}`);
    await up(mona);
    const again = wsClient(t.url, `Bearer ${await userToken('lena@example.com')}`);
    const refused = await again.closed;
    expect(refused.code).toBe(4429);
    expect(refused.reason).toMatch(/^Too many connections: client issuer_[0-9a-f]+\/[\w-]{22} holds its maximum of 1$/);
    expect(refused.reason).not.toMatch(/lena/);
    expect([...lena.closes, ...mona.closes]).toEqual([]);
    for (const ws of [lena, mona, again]) await ws.dispose();
  });
});

describe('rate limits', () => {
  it('count each user on their own, and every user of one registration together', async () => {
    const statuses = async (token: string, n: number) => {
      const answers: number[] = [];
      for (let i = 0; i < n; i += 1) answers.push((await t.request('GET', `${USERS}/nobody`, { token })).status);
      return answers;
    };
    const [hana, ivan] = await Promise.all([userToken('hana', 'limits'), userToken('ivan', 'limits')]);
    expect(await statuses(hana, PER_USER + 1)).toEqual([...Array(PER_USER).fill(404), 429]);
    // Ivan has his own per-user count, until the registration's is spent: 20 over both users.
    expect(await statuses(ivan, PER_ISSUER - PER_USER + 1)).toEqual([...Array(PER_ISSUER - PER_USER).fill(404), 429]);
    const refused = await t.request('GET', `${USERS}/nobody`, { token: await userToken('jack', 'limits') });
    expect(refused).toMatchObject({ status: 429, body: { code: 'RATE_LIMITED', detail: expect.stringMatching(/every user of issuer registration/) } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another registration's users and the organisation's clients are not held by it.
    expect((await t.request('GET', `${USERS}/nobody`, { token: await userToken('kim') })).status).toBe(404);
    expect((await t.request('GET', `${USERS}/nobody`, { token: t.token })).status).toBe(404);
  });
});
