import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../gateway/auth/clients.ts';
import { attemptAddress } from '../../gateway/protection/limits.ts';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';

const TOKEN = '/platform/oauth/v1/token';
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;
let t: TestStack;

/** POST from a chosen loopback source address (127.0.0.x): the gateway sees each as its own caller. */
function postFrom(base: string, path: string, from: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; retryAfter?: string; body: Record<string, string> }> {
  const body = new URLSearchParams(form).toString();
  return new Promise((resolve, reject) => {
    const request = http.request(`${base}${path}`, { method: 'POST', localAddress: from, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body), ...headers } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'], body: JSON.parse(text) as Record<string, string> }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring'] }); });
afterAll(async () => { await t?.close(); });

describe('POST /platform/oauth/v1/token', () => {
  it('issues a one-hour bearer token from a form body', async () => {
    const res = await t.request('POST', TOKEN, { form: { grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id, client_secret: DEFAULT_CLIENT.secret } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'b2b roadside' });
    const claims = decodeJwt(res.body.access_token);
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(claims).toMatchObject({ sub: DEFAULT_CLIENT.id, org: DEFAULT_CLIENT.org });
  });

  it('accepts a JSON body and HTTP Basic client authentication, and narrows scope on request', async () => {
    const json = await t.request('POST', TOKEN, { body: { grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id, client_secret: DEFAULT_CLIENT.secret, scope: 'b2b' } });
    expect(json.status).toBe(200);
    expect(json.body.scope).toBe('b2b');
    const viaBasic = await t.request('POST', TOKEN, { form: { grant_type: 'client_credentials' }, headers: { authorization: basic(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret) } });
    expect(viaBasic.status).toBe(200);
    const usable = await t.request('POST', '/shared-mobility-insights/v2/users', { token: viaBasic.body.access_token, body: {} });
    expect(usable.status).toBe(201);
  });

  it('answers RFC 6749 errors', async () => {
    const cases: [Record<string, string>, Record<string, string> | undefined, number, string][] = [
      [{ grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id, client_secret: 'wrong-secret' }, undefined, 401, 'invalid_client'],
      [{ grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'x' }, undefined, 401, 'invalid_client'],
      [{ grant_type: 'client_credentials' }, undefined, 401, 'invalid_client'],
      [{ client_id: DEFAULT_CLIENT.id, client_secret: DEFAULT_CLIENT.secret }, undefined, 400, 'invalid_request'],
      [{ grant_type: 'password', client_id: DEFAULT_CLIENT.id, client_secret: DEFAULT_CLIENT.secret }, undefined, 400, 'unsupported_grant_type'],
      [{ grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id, client_secret: DEFAULT_CLIENT.secret, scope: 'superuser' }, undefined, 400, 'invalid_scope'],
      [{ grant_type: 'client_credentials', client_secret: DEFAULT_CLIENT.secret }, { authorization: basic(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret) }, 400, 'invalid_request'],
      [{ grant_type: 'client_credentials' }, { authorization: basic(DEFAULT_CLIENT.id, 'bad') }, 401, 'invalid_client'],
    ];
    for (const [form, headers, status, error] of cases) {
      const res = await t.request('POST', TOKEN, { form, headers });
      expect(res.status, JSON.stringify(form)).toBe(status);
      expect(res.body.error).toBe(error);
      expect(res.body.access_token).toBeUndefined();
    }
    const basicFail = await t.request('POST', TOKEN, { form: { grant_type: 'client_credentials' }, headers: { authorization: basic(DEFAULT_CLIENT.id, 'bad') } });
    expect(basicFail.headers.get('www-authenticate')).toMatch(/^Basic/);
    const notObject = await t.request('POST', TOKEN, { body: '["x"]' });
    expect(notObject.status).toBe(400);
    expect(notObject.body.error).toBe('invalid_request');
  });

  it('refuses client credentials in the query string with 400 on both token endpoints, issuing nothing', async () => {
    const roadside = '/services/roadside/v1/oauth/accesstoken';
    const creds = `client_id=${DEFAULT_CLIENT.id}&client_secret=${DEFAULT_CLIENT.secret}`;
    const attempts = [
      await t.request('POST', `${TOKEN}?${creds}`, { form: { grant_type: 'client_credentials' } }),
      await t.request('POST', `${TOKEN}?client_secret=${DEFAULT_CLIENT.secret}`, { form: { grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id } }),
      await t.request('POST', `${roadside}?grant_type=client_credentials&${creds}`),
      await t.request('POST', `${roadside}?grant_type=client_credentials&client_id=${DEFAULT_CLIENT.id}`, { headers: { authorization: basic(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret) } }),
      await t.request('POST', `${roadside}?grant_type=client_credentials&access_token=abc`, { headers: { authorization: basic(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret) } }),
    ];
    for (const res of attempts) {
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.error_description).toMatch(/must not be sent in the query string/);
      expect(res.body.access_token).toBeUndefined();
    }
    // The documented roadside call (grant_type in the query, the client in HTTP Basic) still works.
    const documented = await t.request('POST', `${roadside}?grant_type=client_credentials`, { headers: { authorization: basic(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret) } });
    expect(documented.status).toBe(200);
  });

  it('answers NUL characters and over-long credentials with 4xx, never 500', async () => {
    const roadside = '/services/roadside/v1/oauth/accesstoken?grant_type=client_credentials';
    const nul = [
      await t.request('POST', TOKEN, { form: { grant_type: 'client_credentials', client_id: 'a\u0000b', client_secret: 'x' } }),
      await t.request('POST', TOKEN, { body: { grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id, client_secret: 's\u0000' } }),
      await t.request('POST', TOKEN, { form: { grant_type: 'client_credentials' }, headers: { authorization: basic('a\u0000b', 'x') } }),
      await t.request('POST', roadside, { headers: { authorization: basic('a\u0000b', 'x') } }),
      await t.request('POST', roadside, { headers: { authorization: `Basic ${Buffer.from('a\u0000b:x').toString('base64')}` } }),
      await t.request('POST', roadside, { form: { client_id: 'a\u0000b', client_secret: 'x' } }),
    ];
    for (const res of nul) {
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.error_description).toMatch(/NUL/);
    }
    for (const length of [129, 256, 10_000]) {
      const res = await t.request('POST', TOKEN, { form: { grant_type: 'client_credentials', client_id: 'c'.repeat(length), client_secret: 's'.repeat(length) } });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
    }
  });

  it('stores client secrets hashed', async () => {
    const row = await t.stack.db.orm.em.fork().findOneOrFail(Client, { clientId: DEFAULT_CLIENT.id });
    expect(row.secretHash).toMatch(/^scrypt\$/);
    expect(row.secretHash).not.toContain(DEFAULT_CLIENT.secret);
  });

  it('stops accepting tokens of a client whose secret was rotated or that was disabled', async () => {
    const c = await t.clientFor('org-rot', ['b2b']);
    expect((await t.request('POST', '/shared-mobility-insights/v2/users', { token: c.token, body: {} })).status).toBe(201);
    // Right away, in the same second the token was issued: tokens carry the secret generation.
    await t.stack.gateway.clients.rotate(c.clientId);
    t.stack.gateway.tokenGate.forget(c.clientId);
    const old = await t.request('POST', '/shared-mobility-insights/v2/users', { token: c.token, body: {} });
    expect(old.status).toBe(401);
    expect(old.body.detail).toMatch(/rotated/);
    const gql = await t.graphql('{ user(userId: "x") { userId } }', {}, c.token);
    expect(gql.status).toBe(401);
    expect(gql.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    expect((await t.request('POST', TOKEN, { form: { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret } })).status).toBe(401);

    const d = await t.clientFor('org-dis', ['b2b']);
    await t.stack.gateway.clients.setDisabled(d.clientId, true);
    t.stack.gateway.tokenGate.forget(d.clientId);
    expect((await t.request('GET', '/shared-mobility-insights/v2/users/x', { token: d.token })).status).toBe(401);
  });
});

const PER_CLIENT = 5;
const PER_ADDRESS = 12;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe.each([
  ['by each process', {}],
  ['in Redis', { REDIS_URL, REDIS_KEY_PREFIX: `frg-test-${randomBytes(6).toString('hex')}:` }],
])('failed token attempts, counted %s', (_where, env: Record<string, string>) => {
  let s: TestStack;
  beforeAll(async () => {
    s = await startTestStack({ subgraphs: [], env: { ...env, TOKEN_RATE_LIMIT_PER_MINUTE: String(PER_CLIENT), TOKEN_ADDRESS_RATE_LIMIT_PER_MINUTE: String(PER_ADDRESS) } });
  });
  afterAll(async () => { await s?.close(); });

  const endpoints = [
    { name: 'platform', send: (from: string, id: string, secret: string) => postFrom(s.url, TOKEN, from, { grant_type: 'client_credentials', client_id: id, client_secret: secret }) },
    { name: 'roadside', send: (from: string, id: string, secret: string) => postFrom(s.url, '/services/roadside/v1/oauth/accesstoken?grant_type=client_credentials', from, {}, { authorization: basic(id, secret) }) },
  ];

  it.each(endpoints.map((e, i) => [e.name, e, `127.0.0.${10 + 2 * i}`, `127.0.0.${11 + 2 * i}`] as const))(
    "never refuse the right secret because of another address's failures (%s endpoint)",
    async (_name, endpoint, attacker, partner) => {
      const c = await s.clientFor(`org-lockout-${endpoint.name}`, ['b2b', 'roadside']);
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 32; i++) {
        last = await endpoint.send(attacker, c.clientId, `wrong-${i}`);
        statuses.push(last.status);
      }
      expect(statuses).toEqual([...Array(PER_CLIENT).fill(401), ...Array(32 - PER_CLIENT).fill(429)]);
      expect(Number(last!.retryAfter)).toBeGreaterThan(0);
      expect(last!.body.error).toBe('too_many_requests');
      const partnerRes = await endpoint.send(partner, c.clientId, c.clientSecret);
      expect(partnerRes.status, JSON.stringify(partnerRes.body)).toBe(200);
      expect(partnerRes.body.access_token).toBeTruthy();
      // The address over its limit stays refused, even with the right secret, until its window ends.
      expect((await endpoint.send(attacker, c.clientId, c.clientSecret)).status).toBe(429);
    },
  );

  it('count only failures: the right secret past the limit is still served, and failures after it are counted', async () => {
    const c = await s.clientFor('org-busy', ['b2b']);
    const from = '127.0.0.20';
    for (let i = 0; i < PER_CLIENT * 2; i++) expect((await endpoints[0].send(from, c.clientId, c.clientSecret)).status).toBe(200);
    const wrong: number[] = [];
    for (let i = 0; i < PER_CLIENT + 1; i++) wrong.push((await endpoints[0].send(from, c.clientId, `wrong-${i}`)).status);
    expect(wrong).toEqual([...Array(PER_CLIENT).fill(401), 429]);
  });

  it('bound one address over every client id, before any secret of a burst is checked', async () => {
    const c = await s.clientFor('org-burst', ['b2b']);
    const clients = s.stack.gateway.clients;
    const authenticate = clients.authenticate.bind(clients);
    let checked = 0;
    clients.authenticate = (id, secret) => { checked += 1; return authenticate(id, secret); };
    try {
      const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => endpoints[0].send('127.0.0.21', `guessed-client-${i}`, 'x')));
      const statuses = burst.map((r) => r.status);
      expect(statuses.filter((st) => st === 401).length).toBe(PER_ADDRESS);
      expect(statuses.filter((st) => st === 429).length).toBe(40 - PER_ADDRESS);
      expect(checked).toBe(PER_ADDRESS);
      expect((await endpoints[0].send('127.0.0.21', c.clientId, c.clientSecret)).status).toBe(429);
      expect(checked).toBe(PER_ADDRESS);
      expect((await endpoints[0].send('127.0.0.22', c.clientId, c.clientSecret)).status).toBe(200);
    } finally {
      clients.authenticate = authenticate;
    }
  });
});

describe('the address failed attempts count against', () => {
  it('is an IPv4 address on its own (also IPv4-mapped), and an IPv6 address with its /64', () => {
    expect(attemptAddress('127.0.0.2')).toBe('127.0.0.2');
    expect(attemptAddress('::ffff:127.0.0.2')).toBe('127.0.0.2');
    expect(attemptAddress('2001:db8:1:2:aaaa::1')).toBe(attemptAddress('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    expect(attemptAddress('2001:db8:1:2::1')).not.toBe(attemptAddress('2001:db8:1:3::1'));
  });
});

describe('operational endpoints', () => {
  it('serves /healthz, /readyz and an OpenAPI 3.1 document covering the REST table', async () => {
    expect((await t.request('GET', '/healthz')).body).toEqual({ status: 'ok' });
    const ready = await t.request('GET', '/readyz');
    expect(ready.body.checks).toMatchObject({ database: true, scoring: true });
    const doc = await t.request('GET', '/openapi.json');
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toContain('/shared-mobility-insights/v2/users/{userId}');
    expect(doc.body.paths['/platform/oauth/v1/token'].post.operationId).toBe('generateToken');
  });

  it('answers unknown paths with problem+json 404 and echoes a request id', async () => {
    const res = await t.request('GET', '/nope', { headers: { 'x-request-id': 'req-123' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(res.headers.get('x-request-id')).toBe('req-123');
    expect(res.body.requestId).toBe('req-123');
  });
});
