import { connect } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatError } from '../../subgraphs/platform/format-error.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { countRows } from '../support/rows.ts';
import { sourceAFull } from '../scoring/mvr-fixtures.ts';

/**
 * Inputs that used to answer 500 or a non-problem body: each is a 4xx problem (or 503 with
 * Retry-After for an unavailable database), and nothing is written.
 */
let t: TestStack;
beforeAll(async () => { t = await startTestStack({ subgraphs: ['booking', 'scoring'] }); });
afterAll(async () => { await t?.close(); });

/** Sends raw bytes and returns the status line, headers and body of the answer. */
function raw(port: number, request: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (chunk) => { data += chunk.toString(); });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const [head, ...rest] = data.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      if (!status) reject(new Error(`no answer: ${data.slice(0, 200)}`));
      else resolve({ status, headers: head, body: rest.join('\r\n\r\n') });
    });
    socket.write(request);
    socket.end();
  });
}

const cursor = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('the HTTP parser\'s refusals are problems too', () => {
  it('a 420 KB query string: 414 problem+json; 20 KB of headers: 431 problem+json', async () => {
    const port = Number(new URL(t.url).port);
    const longUrl = await raw(port, `GET /shared-mobility-insights/v2/bookings?after=${'a'.repeat(420_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(longUrl.status).toBe(414);
    expect(longUrl.headers).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(longUrl.body)).toMatchObject({ status: 414, code: 'URI_TOO_LONG', title: 'URI Too Long' });
    const bigHeaders = await raw(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(20_000)}\r\n\r\n`);
    expect(bigHeaders.status).toBe(431);
    expect(bigHeaders.headers).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(bigHeaders.body)).toMatchObject({ status: 431, code: 'REQUEST_HEADER_FIELDS_TOO_LARGE' });
    const garbage = await raw(port, 'NOT HTTP AT ALL\r\n\r\n');
    expect(garbage.status).toBe(400);
    expect(JSON.parse(garbage.body)).toMatchObject({ status: 400, code: 'BAD_REQUEST' });
    // The server is unharmed.
    expect((await t.request('GET', '/healthz')).status).toBe(200);
  });

  it('a path parameter over 1000 characters: 414 problem+json', async () => {
    const res = await t.request('GET', `/shared-mobility-insights/v2/users/${'u'.repeat(1_500)}`, { token: t.token });
    expect(res.status).toBe(414);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.title).toBe('URI Too Long');
  });
});

describe('bad input that reached the database', () => {
  it('NUL inside a decoded pagination cursor: 400 naming `after`, on REST and GraphQL', async () => {
    for (const after of [cursor([1_700_000_000, 'a\u0000b']), cursor([1_700_000_000, 'x'.repeat(10_000)])]) {
      const rest = await t.request('GET', `/shared-mobility-insights/v2/bookings?after=${after}`, { token: t.token });
      expect(rest.status).toBe(400);
      expect(rest.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(rest.body).toMatchObject({ code: 'BAD_USER_INPUT', field: 'after' });
      const gql = await t.graphql('query($a: String) { bookings(first: 2, after: $a) { nodes { bookingId } } }', { a: after });
      expect(gql.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'after' });
    }
  });

  it('a userID of 256 or more characters on create user: 400 naming the field, nothing written', async () => {
    const before = await countRows(t.stack);
    for (const length of [256, 10_000]) {
      for (const body of [{ userID: 'u'.repeat(length) }, { userId: 'u'.repeat(length) }]) {
        const res = await t.request('POST', '/shared-mobility-insights/v2/users', { token: t.token, body });
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.userId' });
        expect(res.body.detail).toMatch(/at most 255 characters/);
      }
      const gql = await t.graphql('mutation($id: ID) { createUser(input: { userId: $id }) { userId } }', { id: 'g'.repeat(length) });
      expect(gql.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect(await countRows(t.stack)).toEqual(before);
    const ok = await t.request('POST', '/shared-mobility-insights/v2/users', { token: t.token, body: { userID: 'u'.repeat(255) } });
    expect(ok.status).toBe(201);
  });

  it('a GraphQL document over the token limit: HTTP 400, GRAPHQL_PARSE_FAILED', async () => {
    const res = await t.graphql(`{ ${'__typename '.repeat(6_000)}}`);
    expect(res.status).toBe(400);
    expect(res.errors?.[0].extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
    expect(res.errors?.[0].message).toMatch(/tokens/);
  });
});

/** JSON text of objects nested `depth` deep around `leaf`. */
const deepObject = (depth: number, leaf = '1') => `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
const TOO_DEEP = { code: 'BAD_USER_INPUT', reason: 'TOO_DEEP' };

describe('JSON nested deeper than JSON_MAX_DEPTH (64): refused before parsing, 400 BAD_USER_INPUT', () => {
  const createMvr = 'mutation($u: ID!, $r: JSON) { createMvr(userId: $u, source: SOURCE_A, report: $r) { id } }';
  let userId: string;
  beforeAll(async () => {
    userId = (await t.graphql('mutation { createUser(input: { dateOfBirth: "1980-01-01", homeZip: "60601" }) { userId } }')).data.createUser.userId;
  });

  it('a 3,000-deep JSON variable, document literal, or GET variables: 400 BAD_USER_INPUT, not INTERNAL_SERVER_ERROR, nothing written', async () => {
    const before = await countRows(t.stack);
    const variable = await t.request('POST', '/graphql', { token: t.token, body: `{"query":${JSON.stringify(createMvr)},"variables":{"u":"${userId}","r":${deepObject(3_000)}}}` });
    const literal = await t.request('POST', '/graphql', { token: t.token, body: { query: `mutation { createMvr(userId: "${userId}", source: SOURCE_A, report: ${'['.repeat(3_000)}${']'.repeat(3_000)}) { id } }` } });
    const get = await t.request('GET', `/graphql?query=${encodeURIComponent('query($r: JSON) { __typename }')}&variables=${encodeURIComponent(`{"r":${deepObject(200)}}`)}`, { token: t.token });
    for (const [name, res] of Object.entries({ variable, literal, get })) {
      const label = `${name} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
      expect(res.status, label).toBe(400);
      expect(res.body.errors?.[0]?.extensions, label).toMatchObject(TOO_DEEP);
      expect(res.body.errors[0].message, label).toMatch(/nests deeper than 64 levels \(JSON_MAX_DEPTH\)/);
    }
    expect(await countRows(t.stack)).toEqual(before);
  });

  it('a deep REST JSON body, parsed or kept as text (an MVR): 400 problem+json BAD_USER_INPUT', async () => {
    const before = await countRows(t.stack);
    const body = JSON.stringify({ ...sourceAFull(), extra: '__DEEP__' }).replace('"__DEEP__"', deepObject(3_000));
    for (const path of ['/shared-mobility-insights/v2/users', `/shared-mobility-insights/v2/users/${userId}/sourcea-mvr`]) {
      const res = await t.request('POST', path, { token: t.token, body });
      const label = `${path} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
      expect(res.status, label).toBe(400);
      expect(res.headers.get('content-type'), label).toMatch(/application\/problem\+json/);
      expect(res.body, label).toMatchObject({ status: 400, ...TOO_DEEP });
    }
    expect(await countRows(t.stack)).toEqual(before);
  });

  it('a report nested just within the bound is accepted, over GraphQL and REST', async () => {
    // The GraphQL body: {variables: {r: {extra: <61>}}} is 64 levels in all.
    const report = JSON.stringify({ ...sourceAFull(), extra: '__DEEP__' }).replace('"__DEEP__"', deepObject(61));
    const gql = await t.request('POST', '/graphql', { token: t.token, body: `{"query":${JSON.stringify(createMvr)},"variables":{"u":"${userId}","r":${report}}}` });
    expect(gql.body.errors, JSON.stringify(gql.body).slice(0, 300)).toBeUndefined();
    expect(gql.body.data.createMvr.id).toEqual(expect.any(String));
    const rest = await t.request('POST', `/shared-mobility-insights/v2/users/${userId}/sourcea-mvr`, { token: t.token, body: JSON.stringify({ ...sourceAFull(), extra: '__DEEP__' }).replace('"__DEEP__"', deepObject(63)) });
    expect(rest.status, JSON.stringify(rest.body).slice(0, 300)).toBe(201);
  });
});

describe('malformed multipart uploads', () => {
  const UPLOAD = '/services/roadside/v1/provider/fileservice/upload';
  const part = (name: string, value: string) => `--XYZ\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  const file = '--XYZ\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello';

  it('no closing boundary, or no boundary= parameter: 400 problem+json, not 500', async () => {
    for (const [name, contentType, body] of [
      ['no closing boundary', 'multipart/form-data; boundary=XYZ', `${part('fileType', 'PHOTO')}${file}`],
      ['no boundary parameter', 'multipart/form-data', `${part('fileType', 'PHOTO')}${file}\r\n--XYZ--\r\n`],
    ]) {
      const res = await t.request('POST', UPLOAD, { token: t.token, headers: { 'content-type': contentType }, body });
      const label = `${name} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`;
      expect(res.status, label).toBe(400);
      expect(res.headers.get('content-type'), label).toMatch(/application\/problem\+json/);
      expect(res.body, label).toMatchObject({ status: 400, code: 'BAD_USER_INPUT' });
      expect(res.body.detail, label).toMatch(/multipart/i);
    }
  });
});

describe('database errors that are not bugs', () => {
  const log = pino({ level: 'silent' });
  const driverError = (code: string, message = 'driver said no') => Object.assign(new (class DriverException extends Error {})(message), { code });

  it('disk full, out of memory, too many connections, starting up, connection lost: SERVICE_UNAVAILABLE', () => {
    for (const code of ['53100', '53200', '53300', '57P03', '08006', 'ENOSPC']) {
      const out = formatError({ message: 'x', extensions: { code: 'INTERNAL_SERVER_ERROR' } }, driverError(code), log);
      expect(out.extensions?.code, code).toBe('SERVICE_UNAVAILABLE');
      expect(out.message).not.toContain('driver said no');
    }
    const pglite = formatError({ message: 'x' }, new Error('could not extend file "base/5/16384": No space left on device'), log);
    expect(pglite.extensions?.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('a value too long or not storable: BAD_USER_INPUT (a safety net behind the checks)', () => {
    expect(formatError({ message: 'x' }, driverError('22001'), log).extensions?.code).toBe('BAD_USER_INPUT');
    expect(formatError({ message: 'x' }, driverError('22021'), log).extensions?.code).toBe('BAD_USER_INPUT');
    expect(formatError({ message: 'x' }, driverError('42P01'), log).extensions?.code).toBe('INTERNAL_SERVER_ERROR');
  });
});
