import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_HOP_HEADER, signHop } from '../../subgraphs/platform/internal-hop.ts';
import { adminToken, DEFAULT_CLIENT, startTestStack, TEST_HOP_KEY, type TestStack } from '../support/stack.ts';

const ADMIN = '/platform/admin/v1/clients';
const TOKEN = '/platform/oauth/v1/token';
let t: TestStack;
let admin: string;

const tokenFor = async (id: string, secret: string, scope?: string) => t.request('POST', TOKEN, { form: { grant_type: 'client_credentials', client_id: id, client_secret: secret, ...(scope ? { scope } : {}) } });

beforeAll(async () => {
  // The scoring subgraph listens (behind the signed hop) so it can be called directly, as in compose.
  t = await startTestStack({ subgraphs: ['scoring'], env: { SUBGRAPH_TRANSPORT: 'http' } });
  admin = await adminToken(t);
}, 240_000);
afterAll(async () => { await t?.close(); });

describe('the admin API for API clients', () => {
  it('is for operator tokens only: 401 without a token, 403 with an ordinary one', async () => {
    expect((await t.request('GET', ADMIN)).status).toBe(401);
    const ordinary = await t.request('GET', ADMIN, { token: t.token });
    expect(ordinary.status).toBe(403);
    expect(ordinary.body).toMatchObject({ code: 'FORBIDDEN' });
    expect(ordinary.headers.get('content-type')).toMatch(/problem\+json/);
    // The bootstrap client may ask for admin; a token it gets without asking does not carry it.
    expect((await tokenFor(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret)).body.scope).toBe('b2b roadside');
  });

  it('creates, lists, rotates, disables and enables clients, each taking effect at once', async () => {
    const created = await t.request('POST', ADMIN, { token: admin, body: { organisation: 'org-admin', scopes: ['b2b'] } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ organisation: 'org-admin', scopes: ['b2b'] });
    const { clientId, clientSecret } = created.body as { clientId: string; clientSecret: string };
    const first = (await tokenFor(clientId, clientSecret)).body.access_token as string;
    expect((await t.request('POST', '/shared-mobility-insights/v2/users', { token: first, body: {} })).status).toBe(201);

    const list = await t.request('GET', ADMIN, { token: admin });
    expect(list.status).toBe(200);
    const row = (list.body.clients as Record<string, unknown>[]).find((c) => c.clientId === clientId);
    expect(row).toMatchObject({ organisation: 'org-admin', scopes: ['b2b'], disabled: false, secretGeneration: 0 });
    expect(JSON.stringify(list.body)).not.toMatch(/secretHash|scrypt/);

    const rotated = await t.request('POST', `${ADMIN}/${clientId}/rotate`, { token: admin });
    expect(rotated.status).toBe(200);
    expect(rotated.body.clientSecret).not.toBe(clientSecret);
    expect((await t.request('POST', '/shared-mobility-insights/v2/users', { token: first, body: {} })).status).toBe(401);
    expect((await tokenFor(clientId, clientSecret)).status).toBe(401);
    const second = (await tokenFor(clientId, rotated.body.clientSecret as string)).body.access_token as string;
    expect((await t.request('POST', '/shared-mobility-insights/v2/users', { token: second, body: {} })).status).toBe(201);

    expect((await t.request('POST', `${ADMIN}/${clientId}/disable`, { token: admin })).body).toEqual({ clientId, disabled: true });
    expect((await t.request('POST', '/shared-mobility-insights/v2/users', { token: second, body: {} })).status).toBe(401);
    expect((await t.request('POST', `${ADMIN}/${clientId}/enable`, { token: admin })).body).toEqual({ clientId, disabled: false });
    // Tokens issued before the disable stay refused; a new one works.
    expect((await t.request('POST', '/shared-mobility-insights/v2/users', { token: second, body: {} })).status).toBe(401);
    const third = (await tokenFor(clientId, rotated.body.clientSecret as string)).body.access_token as string;
    expect((await t.request('POST', '/shared-mobility-insights/v2/users', { token: third, body: {} })).status).toBe(201);
  });

  it('answers bad input and unknown clients as problems', async () => {
    for (const body of [{}, { organisation: '' }, { organisation: 'x', scopes: ['root'] }, { organisation: 'x', extra: 1 }, { organisation: 'x'.repeat(129) }]) {
      const res = await t.request('POST', ADMIN, { token: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('BAD_USER_INPUT');
    }
    const unknown = await t.request('POST', `${ADMIN}/no-such-client/rotate`, { token: admin });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
    expect((await t.request('POST', `${ADMIN}/no-such-client/disable`, { token: admin })).status).toBe(404);
  });

  it('refuses organisation names outside [A-Za-z0-9][A-Za-z0-9._-]{0,63} (NUL, control characters, paths): 400 naming the field, nothing stored', async () => {
    const before = ((await t.request('GET', ADMIN, { token: admin })).body.clients as unknown[]).length;
    for (const organisation of ['a\u0000b', '../etc', 'a\u0007b', 'line\nbreak', ' padded ', 'a/b', 'x'.repeat(65)]) {
      const res = await t.request('POST', ADMIN, { token: admin, body: { organisation } });
      const label = `${JSON.stringify(organisation)} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
      expect(res.status, label).toBe(400);
      expect(res.headers.get('content-type'), label).toMatch(/problem\+json/);
      expect(res.body, label).toMatchObject({ code: 'BAD_USER_INPUT', field: 'organisation' });
    }
    // The store refuses them too (npm run clients opens it directly when no gateway answers).
    await expect(t.stack.gateway.clients.create('../etc', ['b2b'])).rejects.toMatchObject({ extensions: { code: 'BAD_USER_INPUT', field: 'organisation' } });
    expect(((await t.request('GET', ADMIN, { token: admin })).body.clients as unknown[]).length).toBe(before);
    for (const organisation of ['default', 'org-a', 'Acme_Fleet.EU', 'x'.repeat(64)]) {
      expect((await t.request('POST', ADMIN, { token: admin, body: { organisation } })).status, organisation).toBe(201);
    }
  });
});

describe('revocation holds at the gateway; a listening subgraph takes no client token', () => {
  const USER = '{ user(userId: "nobody") { userId } }';

  it('refuses a client\'s own token at a listening subgraph with 401, even on the signed hop', async () => {
    const c = await t.clientFor('org-direct', ['b2b']);
    const url = t.stack.subgraphUrls.scoring!;
    const body = JSON.stringify({ query: USER });
    const response = await fetch(url, {
      method: 'POST', body,
      headers: { authorization: `Bearer ${c.token}`, 'content-type': 'application/json', [INTERNAL_HOP_HEADER]: signHop(TEST_HOP_KEY, { method: 'POST', target: new URL(url).pathname, body }) },
    });
    expect(response.status).toBe(401);
    expect(((await response.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('refuses a disabled client\'s token, then a rotated one\'s, on GraphQL and REST through the gateway (subgraphs over HTTP)', async () => {
    const c = await t.clientFor('org-revoked', ['b2b']);
    const calls = async (token: string) => [
      (await t.graphql(USER, {}, token)).status, (await t.request('GET', '/shared-mobility-insights/v2/users/nobody', { token })).status,
    ];
    expect(await calls(c.token)).toEqual([200, 404]);
    expect((await t.request('POST', `${ADMIN}/${c.clientId}/disable`, { token: admin })).status).toBe(200);
    expect(await calls(c.token)).toEqual([401, 401]);
    expect((await t.request('POST', `${ADMIN}/${c.clientId}/enable`, { token: admin })).status).toBe(200);
    const fresh = (await tokenFor(c.clientId, c.clientSecret)).body.access_token as string;
    expect(await calls(fresh)).toEqual([200, 404]);
    expect((await t.request('POST', `${ADMIN}/${c.clientId}/rotate`, { token: admin })).status).toBe(200);
    expect(await calls(fresh)).toEqual([401, 401]);
  });
});
