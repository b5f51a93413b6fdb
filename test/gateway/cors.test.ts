/**
 * Browser apps on other origins: CORS for the origins in CORS_ORIGINS (none by default) on GraphQL,
 * REST, the token endpoints and the Risk Index; GET queries without Apollo's preflight header; simple
 * (form, text) POSTs to /graphql still refused as CSRF.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORS_EXPOSED_HEADERS, CORS_METHODS, CORS_REQUEST_HEADERS } from '../../gateway/http/cors-policy.ts';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const APP = 'http://localhost:3000';
const OTHER = 'http://evil.example';
const PATHS = ['/graphql', '/shared-mobility-insights/v2/users/u-1', '/platform/oauth/v1/token', '/services/roadside/v1/oauth/accesstoken', '/riskIndex/v1/riskInfo'];

let t: TestStack;
beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring'], env: { CORS_ORIGINS: `${APP}, http://127.0.0.1:5173` } }); });
afterAll(async () => { await t?.close(); });

const preflight = (path: string, origin: string, method = 'POST') => fetch(`${t.url}${path}`, {
  method: 'OPTIONS',
  headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type,idempotency-key' },
});
const listed = (value: string | null) => (value ?? '').toLowerCase().split(/\s*,\s*/);

describe('CORS for the origins in CORS_ORIGINS', () => {
  it('answers a preflight from a listed origin on every kind of path, before the token gate and the CSRF check', async () => {
    for (const path of PATHS) {
      const res = await preflight(path, APP, path.startsWith('/riskIndex') ? 'GET' : 'POST');
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin'), path).toBe(APP);
      expect(listed(res.headers.get('access-control-allow-headers')), path).toEqual(expect.arrayContaining(['authorization', 'content-type', 'idempotency-key']));
      expect(listed(res.headers.get('vary')), path).toContain('origin');
    }
  });

  it('grants a listed origin on answers, errors included, and exposes the headers a client reads', async () => {
    const graphql = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { origin: APP, 'content-type': 'application/json', authorization: `Bearer ${t.token}` }, body: JSON.stringify({ query: '{ __typename }' }) });
    expect(graphql.status).toBe(200);
    expect(graphql.headers.get('access-control-allow-origin')).toBe(APP);
    expect(listed(graphql.headers.get('access-control-expose-headers'))).toEqual(expect.arrayContaining(['retry-after', 'x-request-id', 'idempotent-replayed', 'location']));
    expect(listed(graphql.headers.get('vary'))).toContain('origin');
    const unauthenticated = await fetch(`${t.url}/shared-mobility-insights/v2/users/u-1`, { headers: { origin: 'http://127.0.0.1:5173' } });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('access-control-allow-origin')).toBe('http://127.0.0.1:5173');
    const risk = await fetch(`${t.url}/riskIndex/v1/riskInfo?geometry=${encodeURIComponent('POINT(-87.63 41.88)')}`, { headers: { origin: APP } });
    expect(risk.headers.get('access-control-allow-origin')).toBe(APP);
  });

  it('allows every method the routes take and every header the API reads, and exposes every header it sends (gateway/http/cors-policy.ts)', async () => {
    const res = await fetch(`${t.url}/shared-mobility-insights/v2/users/u-1`, {
      method: 'OPTIONS', headers: { origin: APP, 'access-control-request-method': 'PATCH', 'access-control-request-headers': Object.keys(CORS_REQUEST_HEADERS).join(',') },
    });
    expect(res.status).toBe(204);
    expect(listed(res.headers.get('access-control-allow-methods')).sort()).toEqual(Object.keys(CORS_METHODS).map((m) => m.toLowerCase()).sort());
    expect(listed(res.headers.get('access-control-allow-headers')).sort()).toEqual(Object.keys(CORS_REQUEST_HEADERS).map((h) => h.toLowerCase()).sort());
    const answer = await fetch(`${t.url}/shared-mobility-insights/v2/users/u-1`, { headers: { origin: APP, authorization: `Bearer ${t.token}` } });
    expect(listed(answer.headers.get('access-control-expose-headers')).sort()).toEqual(Object.keys(CORS_EXPOSED_HEADERS).map((h) => h.toLowerCase()).sort());
    // The rate-limit headers exposed are the ones sent.
    const sent = [...answer.headers.keys()].filter((name) => name.includes('ratelimit'));
    expect(sent.sort()).toEqual(['ratelimit', 'ratelimit-policy', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']);
    expect(listed(answer.headers.get('access-control-expose-headers'))).toEqual(expect.arrayContaining(sent));
  });

  it('lists exactly the methods the gateway\'s routes take (OPTIONS aside)', () => {
    const routes = t.stack.gateway.app.printRoutes({ commonPrefix: false });
    const methods = new Set([...routes.matchAll(/\(([A-Z, ]+)\)/g)].flatMap((m) => m[1]!.split(', ')));
    methods.delete('OPTIONS');
    expect([...methods].sort()).toEqual(Object.keys(CORS_METHODS).sort());
  });

  it('is the CORS table of docs/security.md, row for row', () => {
    const readme = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
    const rows = [...readme.matchAll(/^\| (method|request header|exposed header) \| `([^`]+)` \| (.*) \|$/gm)].map((m) => [m[1], m[2], m[3]]);
    const declared = ([['method', CORS_METHODS], ['request header', CORS_REQUEST_HEADERS], ['exposed header', CORS_EXPOSED_HEADERS]] as const)
      .flatMap(([kind, table]) => Object.entries(table).map(([name, what]) => [kind, name, what]));
    expect(rows).toEqual(declared);
  });

  it('grants nothing to an origin not listed', async () => {
    const res = await preflight('/graphql', OTHER);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const get = await fetch(`${t.url}/riskIndex/v1/riskInfo?geometry=${encodeURIComponent('POINT(-87.63 41.88)')}`, { headers: { origin: OTHER } });
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS_ORIGINS', () => {
  it('is a comma-separated list of origins, empty by default, and refuses what is not an origin', () => {
    expect(loadConfig({}).CORS_ORIGINS).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: ' http://localhost:3000 ,https://app.example.com,' }).CORS_ORIGINS).toEqual(['http://localhost:3000', 'https://app.example.com']);
    for (const bad of ['localhost:3000', 'https://app.example.com/', 'https://app.example.com/path', 'ftp://files.example.com', '*']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(/CORS_ORIGINS/);
    }
  });
});

describe('CORS off by default', () => {
  let plain: TestStack;
  beforeAll(async () => { plain = await startTestStack({ subgraphs: [] }); });
  afterAll(async () => { await plain?.close(); });

  it('grants no origin when CORS_ORIGINS is not set', async () => {
    expect(plain.config.CORS_ORIGINS).toEqual([]);
    const res = await fetch(`${plain.url}/graphql`, { method: 'OPTIONS', headers: { origin: APP, 'access-control-request-method': 'POST' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const post = await fetch(`${plain.url}/graphql`, { method: 'POST', headers: { origin: APP, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
    expect(post.status).toBe(200);
    expect(post.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('GET queries and CSRF', () => {
  const get = (query: string, headers: Record<string, string> = {}) =>
    fetch(`${t.url}/graphql?query=${encodeURIComponent(query)}`, { headers: { accept: 'application/json', ...headers } });

  it('runs a GET query with a bearer token, without apollo-require-preflight', async () => {
    await t.graphql('mutation { createUser(input: { userId: "cors-get-1", homeZip: "60601" }) { userId } }');
    const res = await get('{ user(userId: "cors-get-1") { homeZip } }', { authorization: `Bearer ${t.token}` });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { user: { homeZip: '60601' } } });
  });

  it('runs an anonymous GET query (the Risk Index needs no token)', async () => {
    const res = await get('{ __typename }');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { __typename: 'Query' } });
    const risk = await get('{ riskIndex(wkt: "POINT(-87.63 41.88)") { __typename } }');
    expect(JSON.stringify(await risk.json())).not.toMatch(/CSRF/);
  });

  it('refuses mutations over GET, and simple (form or text) POSTs as CSRF', async () => {
    const mutation = await get('mutation { createUser(input: { userId: "cors-get-2" }) { userId } }', { authorization: `Bearer ${t.token}` });
    expect(mutation.status).toBe(405);
    for (const [type, body] of [
      ['application/x-www-form-urlencoded', 'query=mutation%20%7B%20createUser(input%3A%20%7B%20userId%3A%20%22cors-csrf%22%20%7D)%20%7B%20userId%20%7D%20%7D'],
      ['text/plain', JSON.stringify({ query: 'mutation { createUser(input: { userId: "cors-csrf" }) { userId } }' })],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n{ __typename }\r\n--x--\r\n'],
    ]) {
      const res = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': type, authorization: `Bearer ${t.token}` }, body });
      expect(res.status, type).toBe(400);
      expect(await res.text(), type).toMatch(/CSRF/);
    }
    expect((await t.graphql('{ user(userId: "cors-csrf") { userId } }')).data).toEqual({ user: null });
  });
});
