import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restRoutes } from '../../gateway/rest/index.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { countRows } from '../support/rows.ts';

/**
 * Property-based hostile input on every REST route: malformed and mistyped bodies, huge strings,
 * deep JSON, odd path parameters and query strings. No answer may be a 5xx, every error is
 * problem+json, and a route that refused every input wrote nothing.
 */
let t: TestStack;
beforeAll(async () => { t = await startTestStack(); }, 300_000);
afterAll(async () => { await t?.close(); });

const deepJson = (depth: number): unknown => (depth === 0 ? 'leaf' : { a: deepJson(depth - 1) });
const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom('', ' ', '..', '%00', '\u0000', '\uFFFF', '😀', "' or 1=1 --", '<script>', 'null', 'undefined', '-1', '1e309', 'POINT(', 'x'.repeat(5000)),
);
const hostileValue = fc.oneof(hostileString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(hostileString, { maxLength: 3 }));
const hostileBody = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.dictionary(fc.constantFrom('userId', 'userID', 'VIN', 'vin', 'deviceID', 'startTimestamp', 'estimatedEndTimestamp', 'actualEndTimestamp',
    'dateOfBirth', 'homeZip', 'enrollmentStatus', 'sessionId', 'requestId', 'status', 'latitude', 'longitude', 'rating', 'products', 'type',
    'granted', 'effectiveDate', 'newDeviceId', 'appId', 'benefits', 'disablementLocation', 'content', 'contentType', 'report_type', 'license'), hostileValue, { maxKeys: 6 })
    .map((v) => JSON.stringify(v)),
  fc.constantFrom('{', '{"a":', '[]', '"str"', '42', 'null', JSON.stringify(deepJson(500)), `{"pad":"${'y'.repeat(200_000)}"}`),
);
const hostileQuery = fc.dictionary(fc.constantFrom('geometry', 'wkt', 'radius', 'sessionId', 'appId', 'reqId', 'first', 'after', 'latitude', 'longitude', 'service', 'status'), hostileString, { maxKeys: 4 });

describe('hostile input on every REST route', () => {
  it('never answers 5xx, always problem+json on error, and writes nothing when it refuses', async () => {
    let requests = 0;
    let refused = 0;
    for (const route of restRoutes) {
      const before = await countRows(t.stack);
      let accepted = 0;
      await fc.assert(fc.asyncProperty(
        fc.array(hostileString, { minLength: 3, maxLength: 3 }), hostileBody, hostileQuery,
        async (params, body, query) => {
          let i = 0;
          const path = route.path.replace(/:[A-Za-z]+/g, () => encodeURIComponent(params[i++ % params.length] || 'x'));
          const qs = new URLSearchParams(query as Record<string, string>).toString();
          const withBody = route.method !== 'GET' && route.method !== 'DELETE';
          const res = await t.request(route.method, `${path}${qs ? `?${qs}` : ''}`, {
            token: t.token, ...(withBody ? { body, headers: { 'content-type': 'application/json' } } : {}),
          });
          requests += 1;
          expect(res.status, `${route.method} ${path} ${String(body).slice(0, 80)} -> ${JSON.stringify(res.body).slice(0, 200)}`).toBeLessThan(500);
          if (res.status >= 400) {
            refused += 1;
            expect(res.headers.get('content-type'), `${route.method} ${route.path}`).toMatch(/application\/problem\+json/);
            expect(typeof res.body.detail).toBe('string');
          } else {
            accepted += 1;
          }
        },
      ), { numRuns: 12, seed: 20261122 });
      if (accepted === 0) expect(await countRows(t.stack), `${route.method} ${route.path} wrote rows on refused input`).toEqual(before);
    }
    console.log(`hostile input: ${requests} requests over ${restRoutes.length} routes, ${refused} refused with problem+json, 0 answered 5xx`);
  }, 600_000);
});

const LENGTHS = [0, 1, 255, 256, 10_000];
const ID_NAME = /id$|^vin$|^after$/i;
const idOf = (length: number) => 'i'.repeat(length);
const propertiesOf = (schema: unknown): string[] => Object.keys((schema as { properties?: Record<string, unknown> } | undefined)?.properties ?? {});
const isProblem = (res: { headers: Headers }) => /application\/problem\+json/.test(res.headers.get('content-type') ?? '');

describe('every id field at lengths 0, 1, 255, 256 and 10,000', () => {
  it('path, body and query ids: never 5xx, problem+json on refusal, a mutation with an id over 255 refused and nothing written', async () => {
    let requests = 0;
    for (const route of restRoutes) {
      const params = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]);
      const example = route.docs?.requestExample;
      const bodyIds = propertiesOf(route.docs?.requestBody).filter((name) => ID_NAME.test(name));
      const queryIds = Object.keys(route.docs?.query ?? {}).filter((name) => ID_NAME.test(name));
      const withBody = route.method !== 'GET' && route.method !== 'DELETE';
      const baseBody = example && typeof example === 'object' && !Array.isArray(example) ? example as Record<string, unknown> : {};
      const cases: { where: string; length: number; path: string; body?: unknown }[] = [];
      const pathWith = (param: string | null, value: string) => route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => (name === param ? encodeURIComponent(value) : 'x'));
      for (const length of LENGTHS) {
        for (const param of params) cases.push({ where: `path ${param}`, length, path: pathWith(param, idOf(length)), body: withBody ? baseBody : undefined });
        for (const field of bodyIds) cases.push({ where: `body ${field}`, length, path: pathWith(null, ''), body: { ...baseBody, [field]: idOf(length) } });
        for (const field of queryIds) cases.push({ where: `query ${field}`, length, path: `${pathWith(null, '')}?${field}=${idOf(length)}`, body: withBody ? baseBody : undefined });
      }
      for (const c of cases) {
        const before = c.length > 255 ? await countRows(t.stack) : null;
        const res = await t.request(route.method, c.path, { token: t.token, ...(c.body !== undefined ? { body: c.body } : {}) });
        requests += 1;
        const label = `${route.method} ${route.path} ${c.where} length ${c.length} -> ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`;
        expect(res.status, label).toBeLessThan(500);
        if (res.status >= 400) expect(isProblem(res), label).toBe(true);
        if (before) {
          // A lookup by an over-long id finds nothing (404, or an empty list); anything that would store it is refused.
          if (/^\s*mutation\b/.test(route.operation)) expect(res.status, label).toBeGreaterThanOrEqual(400);
          expect(await countRows(t.stack), label).toEqual(before);
        }
      }
    }
    console.log(`id lengths: ${requests} requests over ${restRoutes.length} routes, 0 answered 5xx, no id over 255 characters stored`);
  }, 900_000);
});

describe('token endpoints', () => {
  const TOKEN = '/platform/oauth/v1/token';
  const ROADSIDE = '/services/roadside/v1/oauth/accesstoken?grant_type=client_credentials';
  const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

  it('client ids and secrets of every length, NUL, odd encodings, in form, JSON and HTTP Basic: 400 or 401 RFC 6749 errors, never 5xx, no token', async () => {
    const values = [...LENGTHS.map(idOf), 'a\u0000b', '\uFFFF', '😀', '%00', "' or 1=1 --"];
    let requests = 0;
    const before = await countRows(t.stack);
    for (const value of values) {
      for (const res of [
        await t.request('POST', TOKEN, { form: { grant_type: 'client_credentials', client_id: value, client_secret: value } }),
        await t.request('POST', TOKEN, { body: { grant_type: 'client_credentials', client_id: value, client_secret: 'x' } }),
        await t.request('POST', TOKEN, { form: { grant_type: 'client_credentials' }, headers: { authorization: basic(value, value) } }),
        await t.request('POST', ROADSIDE, { headers: { authorization: basic(value, 'x') } }),
        await t.request('POST', ROADSIDE, { form: { client_id: value, client_secret: value } }),
        await t.request('POST', `${ROADSIDE}&client_id=${encodeURIComponent(value)}`, { headers: { authorization: basic('x', 'y') } }),
      ]) {
        requests += 1;
        const label = `${JSON.stringify(value.slice(0, 20))} -> ${res.status} ${JSON.stringify(res.body).slice(0, 160)}`;
        expect(res.status, label).toBeGreaterThanOrEqual(400);
        expect(res.status, label).toBeLessThan(500);
        // An RFC 6749 error from the endpoint, or a problem from the HTTP layer (a header over 16 KiB: 431).
        if (isProblem(res)) expect(res.status, label).toBe(431);
        else expect(typeof res.body.error, label).toBe('string');
        expect(res.body.access_token).toBeUndefined();
      }
    }
    for (const header of ['Basic', 'Basic !!!', `Basic ${Buffer.from('no-colon').toString('base64')}`, `Basic ${'A'.repeat(10_000)}`, 'Bearer x']) {
      const res = await t.request('POST', TOKEN, { form: { grant_type: 'client_credentials' }, headers: { authorization: header } });
      requests += 1;
      expect(res.status, header.slice(0, 20)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    expect(await countRows(t.stack)).toEqual(before);
    console.log(`token endpoints: ${requests} hostile requests, all 4xx`);
  }, 300_000);
});

describe('pagination cursors', () => {
  const encode = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

  it('hostile `after` values on REST and GraphQL: 200 or 400, never 5xx', async () => {
    const cursors = [
      ...LENGTHS.map((n) => encode([1_700_000_000, idOf(n)])), ...LENGTHS.map(idOf),
      encode([1_700_000_000, 'a\u0000b']), encode(['\u0000', 1]), encode([1e300, 'a']), encode([-1, '']), encode([1, 2, 3]), encode('{"a":1}'),
      encode('not json'), encode([Number.MAX_SAFE_INTEGER + 2, 'a']), '!!!', '%00', '\u0000', encode(JSON.stringify(deepJson(300))),
    ];
    for (const after of cursors) {
      const rest = await t.request('GET', `/shared-mobility-insights/v2/bookings?after=${encodeURIComponent(after)}`, { token: t.token });
      const label = `${JSON.stringify(after.slice(0, 40))} -> ${rest.status} ${JSON.stringify(rest.body).slice(0, 160)}`;
      expect([200, 400, 414], label).toContain(rest.status);
      if (rest.status === 400) expect(rest.body.code, label).toBe('BAD_USER_INPUT');
      const gql = await t.graphql('query($a: String) { bookings(first: 2, after: $a) { nodes { bookingId } } }', { a: after });
      expect(gql.status, label).toBeLessThan(500);
      for (const error of gql.errors ?? []) expect(error.extensions?.code, label).toBe('BAD_USER_INPUT');
    }
  }, 300_000);
});

describe('GraphQL documents', () => {
  const nest = (depth: number) => `${'user(userId: "x") { bookings { nodes { '.repeat(depth)}bookingId${' } } }'.repeat(depth)}`;
  const documents: [string, unknown][] = [
    ['3,000 aliases', { query: `{ ${Array.from({ length: 3_000 }, (_, i) => `a${i}: __typename`).join(' ')} }` }],
    ['100 levels deep', { query: `{ ${nest(100)} }` }],
    ['fragment cycle', { query: 'query { ...A } fragment A on Query { ...B } fragment B on Query { ...A }' }],
    ['1,000 directives', { query: `{ __typename ${'@include(if: true) '.repeat(1_000)}}` }],
    ['10,000 tokens', { query: `{ ${'__typename '.repeat(10_000)}}` }],
    ['694 KB of introspection', { query: `{ ${Array.from({ length: 5_000 }, (_, i) => `i${i}: __schema { types { name fields { name type { name ofType { name } } } } }`).join(' ')} }`.slice(0, 694 * 1024) }],
    ['unterminated string', { query: '{ user(userId: "x) { userId } }' }],
    ['500 KB string literal', { query: `{ user(userId: "${'s'.repeat(500_000)}") { userId } }` }],
    ['NUL in a literal', { query: '{ user(userId: "a\\u0000b") { userId } }' }],
    ['NUL in a variable', { query: 'query($id: ID!) { user(userId: $id) { userId } }', variables: { id: 'a\u0000b' } }],
    ['variables nested 500 deep', { query: 'mutation($i: CreateUserInput) { createUser(input: $i) { userId } }', variables: { i: deepJson(500) } }],
    ['a JSON variable nested 3,000 deep', { query: 'mutation($r: JSON) { createMvr(userId: "u", source: SOURCE_A, report: $r) { id } }', variables: { r: deepJson(3_000) } }],
    ['a JSON literal nested 3,000 deep', { query: `mutation { createMvr(userId: "u", source: SOURCE_A, report: ${'['.repeat(3_000)}${']'.repeat(3_000)}) { id } }` }],
    ['variable of the wrong type', { query: 'query($id: ID!) { user(userId: $id) { userId } }', variables: { id: { nested: [1, 2] } } }],
    ['unknown operation name', { query: 'query A { __typename }', operationName: 'B' }],
    ['two anonymous operations', { query: '{ __typename } { __typename }' }],
    ['query not a string', { query: 42 }],
    ['no query', { variables: {} }],
    ['an array body', [{ query: '{ __typename }' }]],
    ...LENGTHS.flatMap((n): [string, unknown][] => [
      [`createUser id ${n}`, { query: 'mutation($id: ID) { createUser(input: { userId: $id }) { userId } }', variables: { id: idOf(n) } }],
      [`createVehicle device ${n}`, { query: 'mutation($d: ID) { createVehicle(vin: "1HGCM82633A004352", deviceId: $d) { vin } }', variables: { d: idOf(n) } }],
      [`booking id ${n}`, { query: 'query($id: ID!) { booking(bookingId: $id) { bookingId } }', variables: { id: idOf(n) } }],
    ]),
  ];

  it('hostile documents: never 5xx, no INTERNAL_SERVER_ERROR, nothing written when refused', async () => {
    for (const [name, body] of documents) {
      const before = await countRows(t.stack);
      const res = await t.request('POST', '/graphql', { token: t.token, body });
      const label = `${name} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
      expect(res.status, label).toBeLessThan(500);
      const errors = (res.body as { errors?: { extensions?: { code?: string } }[] }).errors ?? [];
      for (const error of errors) expect(error.extensions?.code, label).not.toBe('INTERNAL_SERVER_ERROR');
      if (errors.length) expect(await countRows(t.stack), label).toEqual(before);
    }
  }, 300_000);
});
