/**
 * The OpenAPI contract: /openapi.json is a structurally valid OpenAPI 3.1 document, and the responses
 * of real requests conform to it. The requests are derived from the document itself (its examples,
 * its parameters), so each area's paths are exercised as soon as its REST table lands.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiContract, type OpenApiOperation } from '../../gateway/docs/contract.ts';
import { ALLOWED_CONTENT_TYPES } from '../../subgraphs/platform/contract-rules.ts';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';

type Json = Record<string, unknown>;

/**
 * Known problems of the document, each owned by an area's REST table (gateway/rest/<area>.ts) and
 * to be fixed there, then removed here. Anything else fails the structure test.
 */
let t: TestStack;
let doc: Json;
let contract: OpenApiContract;
const violations: string[] = [];
const exercised = new Set<string>();
const statuses: number[] = [];

/** Sends a request, checks the response against the document, and records the outcome. */
async function call(method: string, url: string, options: { body?: unknown; form?: Record<string, string>; token?: string | null; headers?: Record<string, string> } = {}) {
  const body = method === 'GET' || method === 'HEAD' ? undefined : options.body;
  const res = await t.request(method, url, { token: options.token === undefined ? t.token : options.token, body, form: options.form, headers: options.headers });
  const found = contract.find(method, url);
  if (found) exercised.add(`${found.method} ${found.path}`);
  statuses.push(res.status);
  violations.push(...contract.check(method, url, res.status, res.headers.get('content-type'), res.body));
  return res;
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The operation's parameters, resolved. */
const parametersOf = (op: OpenApiOperation) => (Array.isArray(op.operation.parameters) ? op.operation.parameters : [])
  .map((p) => contract.resolve(p)).filter(isObject);

/** Values for required query parameters that document no example, by name (a place in Chicago). */
const WELL_KNOWN: Record<string, string> = { latitude: '41.8781', longitude: '-87.6298', geometry: 'POINT(-87.6298 41.8781)', wkt: 'POINT(-87.6298 41.8781)' };

/** A value for a query parameter from its example, enum or default, else a well-known or typed value when required. */
function exampleValue(parameter: Json): string | undefined {
  const schema = isObject(parameter.schema) ? parameter.schema : {};
  const value = parameter.example ?? schema.example ?? (Array.isArray(schema.examples) ? schema.examples[0] : undefined)
    ?? (Array.isArray(schema.enum) ? schema.enum[0] : undefined) ?? schema.default;
  if (value !== undefined) return String(value);
  if (parameter.required !== true) return undefined;
  const name = String(parameter.name);
  if (name in WELL_KNOWN) return WELL_KNOWN[name];
  return schema.type === 'number' || schema.type === 'integer' ? '1' : schema.type === 'boolean' ? 'false' : 'contract';
}

/** The URL of an operation with every path parameter set to `id` and documented query examples. */
function urlFor(op: OpenApiOperation, id: string): string {
  const path = op.path.replace(/\{[^}]+\}/g, encodeURIComponent(id));
  const query = new URLSearchParams();
  for (const p of parametersOf(op)) {
    if (p.in !== 'query') continue;
    const value = exampleValue(p);
    if (value !== undefined) query.set(String(p.name), value);
  }
  const search = query.toString();
  return search ? `${path}?${search}` : path;
}

/** The JSON request example of an operation, if it documents one. */
function requestExample(op: OpenApiOperation): unknown {
  const body = contract.resolve(op.operation.requestBody);
  const content = isObject(body) && isObject(body.content) ? body.content : {};
  const media = content['application/json'];
  return isObject(media) ? media.example : undefined;
}

beforeAll(async () => {
  t = await startTestStack();
  doc = (await t.request('GET', '/openapi.json')).body as Json;
  contract = new OpenApiContract(doc);
}, 240_000);
afterAll(async () => { await t?.close(); });

describe('GET /openapi.json', () => {
  it('is a structurally valid OpenAPI 3.1 document with schemas that compile and examples that match', () => {
    const errors = contract.structureErrors();
    expect(errors).toEqual([]);
    expect(contract.operations().length).toBeGreaterThan(5);
    for (const { method, path, operation } of contract.operations()) {
      expect(typeof operation.summary, `${method} ${path}`).toBe('string');
      expect(Array.isArray(operation.tags) && operation.tags.length > 0, `${method} ${path} has a tag`).toBe(true);
    }
  });

  it('catches a broken document', () => {
    const broken = structuredClone(doc) as { openapi: string; paths: Record<string, Record<string, Json>> };
    broken.openapi = '3.0.3';
    const [path] = Object.keys(broken.paths).filter((p) => p.includes('{'));
    const [method] = Object.keys(broken.paths[path]);
    broken.paths[path][method].parameters = [];
    broken.paths['/nowhere'] = { get: { responses: { 200: { description: 'x', content: { 'application/json': { schema: { $ref: '#/components/schemas/Nope' } } } }, 'nine': { description: 'y' } } } };
    const errors = new OpenApiContract(broken).structureErrors().join('\n');
    expect(errors).toContain('openapi must be 3.1.x');
    expect(errors).toMatch(/path parameter \{\w+\} is not declared/);
    expect(errors).toContain('$ref #/components/schemas/Nope does not resolve');
    expect(errors).toContain('response key nine is not a status code');
  });

  it('flags a response that does not match its documented schema or status', () => {
    const [user] = contract.operations().filter((o) => o.method === 'get' && /users\/\{userId\}$/.test(o.path));
    expect(user).toBeDefined();
    const url = user.path.replace('{userId}', 'u1');
    expect(contract.check('GET', url, 200, 'application/json', { userId: 'u1', userID: 'u1', enrollmentStatus: 'pending' })).toEqual([]);
    expect(contract.check('GET', url, 200, 'application/json', { userId: 'u1' })[0]).toMatch(/body does not match/);
    expect(contract.check('GET', url, 200, 'application/json', { userId: 'u1', userID: 'u1', enrollmentStatus: 'bogus' })[0]).toMatch(/allowed values/);
    // undocumented statuses fall to the `default` problem response, so a plain JSON 418 is off-contract
    expect(contract.check('GET', url, 418, 'application/json', {})[0]).toMatch(/content type application\/json not documented/);
    expect(contract.check('GET', url, 418, 'application/problem+json', { title: 'x' })[0]).toMatch(/body does not match/);
    expect(contract.check('GET', '/no/such/path', 200, 'application/json', {})[0]).toMatch(/not documented/);
    expect(contract.check('GET', url, 404, 'application/problem+json', { title: 'Not found' })[0]).toMatch(/body does not match/);
  });
});

describe('error statuses per operation', () => {
  it('no read lists 409, 413 or 415; every POST, PUT or PATCH with a body lists 413 and 415 (when it parses its body)', () => {
    const table = contract.operations().filter((o) => !o.path.includes('/admin/') && !o.path.includes('oauth'));
    for (const { method, path, operation } of table) {
      const statuses = Object.keys(operation.responses as Json);
      if (method === 'get') for (const s of ['409', '413', '415']) expect(statuses, `${method} ${path}`).not.toContain(s);
      if (operation.requestBody !== undefined) expect(statuses, `${method} ${path}`).toContain('413');
    }
    const posts = table.filter((o) => o.method === 'post' && o.operation.requestBody !== undefined);
    expect(posts.filter((o) => (o.operation.responses as Json)[415] !== undefined).length).toBeGreaterThan(posts.length / 2);
  });
});

describe('binary answers', () => {
  it('retrieveFile documents the stored file types as binary strings, not JSON', () => {
    const op = contract.operations().find((o) => o.operation.operationId === 'retrieveFile');
    expect(op).toBeDefined();
    const content = ((op!.operation.responses as Json)[200] as { content: Record<string, { schema: Json }> }).content;
    expect(Object.keys(content).sort()).toEqual([...ALLOWED_CONTENT_TYPES].sort());
    for (const media of Object.values(content)) expect(media.schema).toEqual({ type: 'string', format: 'binary' });
  });
});

describe('real responses conform to the document', () => {
  it('the token endpoint', async () => {
    const ok = await call('POST', '/platform/oauth/v1/token', { token: null, form: { grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id, client_secret: DEFAULT_CLIENT.secret } });
    expect(ok.status).toBe(200);
  });

  it('the roadside token endpoint: documented, its strings as strings, its refusals as RFC 6749 errors', async () => {
    const path = '/services/roadside/v1/oauth/accesstoken';
    const op = contract.operations().find((o) => o.method === 'post' && o.path === path);
    expect(op, `post ${path} is documented`).toBeDefined();
    const schema = (contract.resolve(op!.operation.responses) as Json)[200] as { content: Record<string, { schema: { properties: Record<string, Json>; required: string[] } }> };
    const ok200 = schema.content['application/json'].schema;
    for (const name of ['access_token', 'token_type', 'expires_in', 'issued_at']) {
      expect(ok200.properties[name]?.type, name).toBe('string');
      expect(ok200.required).toContain(name);
    }
    const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });
    const before = violations.length;
    const ok = await call('POST', `${path}?grant_type=client_credentials`, { token: null, headers: basic(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret) });
    expect(ok.status).toBe(200);
    expect(typeof ok.body.expires_in).toBe('string');
    expect(typeof ok.body.issued_at).toBe('string');
    expect((await call('POST', `${path}?grant_type=password`, { token: null, headers: basic(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret) })).status).toBe(400);
    expect((await call('POST', `${path}?grant_type=client_credentials`, { token: null, headers: basic(DEFAULT_CLIENT.id, 'wrong-secret') })).status).toBe(401);
    const form = await call('POST', path, { token: null, form: { grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id, client_secret: DEFAULT_CLIENT.secret } });
    expect(form.status).toBe(200);
    expect(violations.slice(before)).toEqual([]);
    // a body that breaks the schema is caught: expires_in as a number
    expect(contract.check('POST', path, 200, 'application/json', { ...ok.body, expires_in: 3600 })[0]).toMatch(/body does not match/);
  });

  it('a user created, read, replaced, patched and enrolled over REST', async () => {
    const base = '/shared-mobility-insights/v2/users';
    expect((await call('POST', base, { body: { userID: 'contract-user-1', dateOfBirth: '1988-02-11', homeZip: '60601' } })).status).toBe(201);
    expect((await call('GET', `${base}/contract-user-1`)).status).toBe(200);
    expect((await call('PUT', `${base}/contract-user-1`, { body: { homeZip: '60602' } })).status).toBe(200);
    expect((await call('PATCH', `${base}/contract-user-1`, { body: { dateOfBirth: null } })).status).toBe(200);
    expect((await call('PUT', `${base}/contract-user-1/enrollment`, { body: { enrollmentStatus: 'accepted' } })).status).toBe(200);
    expect((await call('POST', base, { body: { userID: 'contract-user-1' } })).status).toBe(409);
    expect((await call('POST', base, { body: { homeZip: 'not-a-zip' } })).status).toBe(400);
    expect((await call('GET', `${base}/contract-user-1`, { token: null })).status).toBe(401);
  });

  it('every operation, driven from its own documentation', async () => {
    const operations = contract.operations();
    // Bodies from the documented examples, on paths without parameters: creates things (2xx) or explains why not (4xx).
    for (const op of operations) {
      if (op.path.includes('{') || op.path === '/platform/oauth/v1/token') continue;
      const example = requestExample(op);
      if (op.method === 'get' || example !== undefined) await call(op.method.toUpperCase(), urlFor(op, ''), { body: example });
    }
    // Every operation with path parameters, on an id nobody has: a documented 4xx.
    for (const op of operations.filter((o) => o.path.includes('{'))) {
      const res = await call(op.method.toUpperCase(), urlFor(op, 'contract-missing-0'), { body: requestExample(op) ?? {} });
      expect(res.status, `${op.method} ${op.path}`).toBeLessThan(500);
    }
    // Every read that needs a token, without one: 401 problem+json.
    for (const op of operations.filter((o) => o.method === 'get' && Array.isArray(o.operation.security) && o.operation.security.length > 0)) {
      // An id that is well formed for any kind of parameter (a VIN too), so input checks cannot answer first.
      expect((await call('GET', urlFor(op, '1HGCM82633A004352'), { token: null })).status, `${op.method} ${op.path}`).toBe(401);
    }
    const documented = operations.map((o) => `${o.method} ${o.path}`);
    const missed = documented.filter((key) => !exercised.has(key));
    console.log(`OpenAPI contract: ${documented.length} operations, ${exercised.size} exercised, ${statuses.length} responses checked (${statuses.filter((s) => s < 300).length} 2xx), ${violations.length} violations`);
    expect(missed.filter((key) => !key.startsWith('post /platform'))).toEqual([]);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
  }, 120_000);

  it('found no response that breaks the document', () => {
    expect(violations).toEqual([]);
  });
});
