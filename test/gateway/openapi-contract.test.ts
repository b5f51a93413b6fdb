/**
 * The OpenAPI document: a valid OpenAPI 3.1 document (checked against the official schema by
 * @seriousme/openapi-schema-validator), with per-operation error statuses, binary answers and examples
 * that match their schemas. Every operation's real answers are walked by test/rest/conformance.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiContract } from '../support/openapi.ts';
import { ALLOWED_CONTENT_TYPES } from '../../subgraphs/roadside/rules.ts';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';

type Json = Record<string, unknown>;

let t: TestStack;
let doc: Json;
let contract: OpenApiContract;
const violations: string[] = [];

/** Sends a request and checks the answer against the document. */
async function call(method: string, url: string, options: { body?: unknown; form?: Record<string, string>; token?: string | null; headers?: Record<string, string> } = {}) {
  const res = await t.request(method, url, { token: options.token === undefined ? t.token : options.token, body: options.body, form: options.form, headers: options.headers });
  violations.push(...contract.check(method, url, res));
  return res;
}

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['booking'] });
  doc = (await t.request('GET', '/openapi.json')).body as Json;
  contract = await OpenApiContract.of(doc);
}, 240_000);
afterAll(async () => { await t?.close(); });

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, every operation with an id, a summary and a tag', async () => {
    expect(await OpenApiContract.documentErrors(doc)).toEqual([]);
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    const operations = contract.operations();
    expect(new Set(operations.map((o) => o.operation.operationId)).size).toBe(operations.length);
    for (const { method, path, operation } of operations) {
      expect(typeof operation.summary, `${method} ${path}`).toBe('string');
      expect(Array.isArray(operation.tags) && operation.tags.length > 0, `${method} ${path} has a tag`).toBe(true);
      const declared = (Array.isArray(operation.parameters) ? operation.parameters as Json[] : []).filter((p) => p.in === 'path').map((p) => p.name).sort();
      expect(declared, `${method} ${path} declares its path parameters`).toEqual([...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort());
    }
  });

  it('catches a broken document', async () => {
    const unknownStatus = structuredClone(doc) as { paths: Record<string, unknown> };
    unknownStatus.paths['/nowhere'] = { get: { responses: { 200: { description: 'x' }, nine: { description: 'y' } } } };
    expect((await OpenApiContract.documentErrors(unknownStatus)).join('\n')).toMatch(/nine/);
    const dangling = structuredClone(doc) as { paths: Record<string, unknown> };
    dangling.paths['/nowhere'] = { get: { responses: { 200: { description: 'x', content: { 'application/json': { schema: { $ref: '#/components/schemas/Nope' } } } } } } };
    expect((await OpenApiContract.documentErrors(dangling)).join('\n')).toContain('#/components/schemas/Nope');
  });

  it('flags an answer that does not match its documented schema, status or media type', () => {
    const url = '/shared-mobility-insights/v2/users/u1';
    const json = new Headers({ 'content-type': 'application/json' });
    const problem = new Headers({ 'content-type': 'application/problem+json' });
    expect(contract.check('GET', url, { status: 200, headers: json, body: { userId: 'u1', userID: 'u1', enrollmentStatus: 'pending' } })).toEqual([]);
    expect(contract.check('GET', url, { status: 200, headers: json, body: { userId: 'u1' } })[0]).toMatch(/body does not match/);
    expect(contract.check('GET', url, { status: 200, headers: json, body: { userId: 'u1', userID: 'u1', enrollmentStatus: 'bogus' } })[0]).toMatch(/allowed values/);
    expect(contract.check('GET', url, { status: 418, headers: problem, body: { title: 'x' } })[0]).toMatch(/status not listed/);
    expect(contract.check('GET', url, { status: 404, headers: json, body: {} })[0]).toMatch(/content type application\/json not declared/);
    expect(contract.check('GET', url, { status: 404, headers: problem, body: { title: 'Not found' } })[0]).toMatch(/body does not match/);
    expect(contract.check('GET', '/no/such/path', { status: 200, headers: json, body: {} })[0]).toMatch(/not documented/);
  });
});

describe('error statuses per operation', () => {
  it('no catch-all: each operation lists what it can answer', () => {
    for (const { method, path, operation } of contract.operations()) {
      const statuses = Object.keys(operation.responses as Json);
      const at = `${method} ${path}`;
      expect(statuses, at).not.toContain('default');
      expect(statuses, at).toContain('503');
      if (!path.includes('oauth')) expect(statuses, at).toContain('429');
      const hasInput = path.includes('{') || operation.requestBody !== undefined || (Array.isArray(operation.parameters) && operation.parameters.length > 0);
      expect(statuses.includes('400'), `${at} lists 400 only with input`).toBe(hasInput);
      if (!path.includes('{') && operation.requestBody === undefined && !(Array.isArray(operation.parameters) && (operation.parameters as Json[]).some((p) => p.in === 'query'))) expect(statuses, at).not.toContain('404');
    }
  });

  it('no read lists 409, 413 or 415; every POST, PUT or PATCH with a body lists 413 and 415 (when it parses its body)', () => {
    const table = contract.operations().filter((o) => !o.path.includes('/admin/') && !o.path.includes('oauth'));
    // A batch job's result is a read whose answer depends on the job's state: 409 until it has finished.
    const stateful = new Set(['get /riskIndex/v1/batches/{id}/result']);
    for (const { method, path, operation } of table) {
      const statuses = Object.keys(operation.responses as Json);
      const reads = method === 'get' && !stateful.has(`${method} ${path}`);
      if (reads) for (const s of ['409', '413', '415']) expect(statuses, `${method} ${path}`).not.toContain(s);
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

describe('examples', () => {
  it('every parameter but Idempotency-Key and every success answer has an example, and each matches its schema strictly', async () => {
    const strict = await OpenApiContract.of(doc, { strict: true });
    const missing: string[] = [];
    const wrong: string[] = [];
    for (const { method, path, operation } of contract.operations()) {
      for (const p of (Array.isArray(operation.parameters) ? operation.parameters as Json[] : [])) {
        if (p.name === 'Idempotency-Key') expect(p.example, `${method} ${path}: no fixed Idempotency-Key`).toBeUndefined();
        else if (p.example === undefined) missing.push(`${method} ${path} parameter ${String(p.name)}`);
      }
      for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
        if (!status.startsWith('2') || !response.content) continue;
        const media = Object.entries(response.content as Record<string, Json>).filter(([, m]) => m.example !== undefined);
        if (!media.length) missing.push(`${method} ${path} ${status}`);
        for (const [type, m] of media) if (type === 'application/json') wrong.push(...strict.checkBody(String(operation.operationId), Number(status), m.example));
      }
    }
    expect(missing).toEqual([]);
    expect(wrong).toEqual([]);
  });
});

describe('real answers conform to the document', () => {
  it('the token endpoint, including its RFC 6749 refusals', async () => {
    const ok = await call('POST', '/platform/oauth/v1/token', { token: null, form: { grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id, client_secret: DEFAULT_CLIENT.secret } });
    expect(ok.status).toBe(200);
    expect((await call('POST', '/platform/oauth/v1/token', { token: null, form: { grant_type: 'password', client_id: DEFAULT_CLIENT.id, client_secret: DEFAULT_CLIENT.secret } })).status).toBe(400);
    expect((await call('POST', '/platform/oauth/v1/token', { token: null, form: { grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id, client_secret: 'wrong' } })).status).toBe(401);
    expect(violations).toEqual([]);
  });

  it('the roadside token endpoint: documented, its strings as strings, its refusals as RFC 6749 errors', async () => {
    const path = '/services/roadside/v1/oauth/accesstoken';
    const op = contract.operations().find((o) => o.method === 'post' && o.path === path);
    expect(op, `post ${path} is documented`).toBeDefined();
    const schema = (op!.operation.responses as Json)[200] as { content: Record<string, { schema: { properties: Record<string, Json>; required: string[] } }> };
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
    expect(contract.check('POST', path, { status: 200, headers: ok.headers, body: { ...ok.body, expires_in: 3600 } })[0]).toMatch(/body does not match/);
  });
});
