/**
 * Idempotency-Key on every POST and PATCH path and on GraphQL mutations: a retry gets the first
 * answer and creates nothing more, a different request under the same key is 422, a duplicate
 * while the first still runs is 409, and stored answers survive a restart. Runs on PGlite and,
 * with DATABASE_URL, on PostgreSQL.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClientPaths } from '../../gateway/admin/clients-routes.ts';
import { adminDocumentPaths } from '../../gateway/admin/documents-routes.ts';
import { adminIssuerPaths } from '../../gateway/admin/issuers-routes.ts';
import { IdempotencyRecord } from '../../gateway/idempotency/entity.ts';
import { idempotencyKeyParameter } from '../../gateway/idempotency/openapi.ts';
import { ABANDONED_AFTER_MS, RETENTION_MS } from '../../gateway/idempotency/store.ts';
import { restRoutes } from '../../gateway/rest/index.ts';
import { buildOpenApi } from '../../gateway/rest/openapi.ts';
import { countRows } from '../support/rows.ts';
import { DEFAULT_CLIENT, startTestStack, type HttpResult, type TestStack } from '../support/stack.ts';
import { sourceAFull } from '../scoring/mvr-fixtures.ts';
import { CHICAGO, dispatch, provision, RS, session } from '../roadside/helpers.ts';

const SMI = '/shared-mobility-insights/v2';
const REG = '/registration/v2';
const VIN = '1HGCM82633A004352';

let t: TestStack;
let keyCounter = 0;
const newKey = () => `idem-${Date.now().toString(36)}-${++keyCounter}`;

/** One request with an Idempotency-Key (as the quoted string of the draft, unless `bare`). */
function send(method: string, path: string, key: string | null, options: { body?: unknown; form?: Record<string, string>; token?: string } = {}) {
  return t.request(method, path, { token: options.token ?? t.token, body: options.body, form: options.form, headers: key === null ? {} : { 'idempotency-key': `"${key}"` } });
}

/** Answers must match as the client sees them: status, body and the headers that matter. */
function expectSameAnswer(replay: HttpResult, first: HttpResult) {
  expect(replay.status).toBe(first.status);
  expect(replay.body).toEqual(first.body);
  for (const name of ['content-type', 'location', 'cache-control', 'etag', 'link', 'content-disposition']) expect(replay.headers.get(name), name).toBe(first.headers.get(name));
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
}

async function idempotencyRows(stack = t.stack) {
  return stack.db.orm.em.fork().find(IdempotencyRecord, {}, { disableIdentityMap: true });
}

function expectProblem(res: HttpResult, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code });
}

beforeAll(async () => { t = await startTestStack(); }, 300_000);
afterAll(async () => { await t?.close(); });

describe('retried creates make one record and get the same answer', () => {
  it('POST bookings without a bookingID', async () => {
    expect((await t.request('POST', `${SMI}/vehicles`, { token: t.token, body: { VIN, deviceID: '356938035640001' } })).status).toBe(201);
    const key = newKey();
    const body = { VIN, userID: 'idem-driver', startTimestamp: 1_900_000_000 };
    const first = await send('POST', `${SMI}/bookings`, key, { body });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const before = await countRows(t.stack);
    // Key order and spacing of the body do not matter: canonical JSON.
    const retries = [await send('POST', `${SMI}/bookings`, key, { body: { startTimestamp: 1_900_000_000, userID: 'idem-driver', VIN } }), await send('POST', `${SMI}/bookings`, key, { body })];
    for (const retry of retries) expectSameAnswer(retry, first);
    expect(await countRows(t.stack)).toEqual(before);
    // Without a key the same request is a new one (here refused: the vehicle is booked).
    expect((await send('POST', `${SMI}/bookings`, null, { body })).status).toBe(409);
  });

  it('POST rescue dispatch, session and provisioning', async () => {
    const member = await provision(t, t.token);
    const sessionId = await session(t, t.token, [{ key: 'vin', value: member.vin }]);
    const key = newKey();
    const body = { sessionId, disablementLocation: CHICAGO, vehicle: { color: 'Blue' }, batteryService: 'jump' };
    const first = await send('POST', `${RS}/rescue/battery`, key, { body });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const before = await countRows(t.stack);
    expectSameAnswer(await send('POST', `${RS}/rescue/battery`, key, { body }), first);
    expect(await countRows(t.stack)).toEqual(before);
    // Without a key a second dispatch on the session is a second request (or refused), never the same answer.
    const unkeyed = await dispatch(t, t.token, sessionId);
    expect(unkeyed.headers.get('idempotent-replayed')).toBeNull();

    const sessionKey = newKey();
    const sessionBody = { appId: 'idem-app', benefits: [{ key: 'vin', value: member.vin }], otherInfo: [{ key: 'ppuflag', value: 'N' }] };
    const firstSession = await send('POST', `${RS}/rescue/session`, sessionKey, { body: sessionBody });
    expect(firstSession.status).toBe(201);
    const sessions = (await countRows(t.stack))['roadside.RescueSession'];
    expectSameAnswer(await send('POST', `${RS}/rescue/session`, sessionKey, { body: sessionBody }), firstSession);
    expect((await countRows(t.stack))['roadside.RescueSession']).toBe(sessions);

    // A form post: the body is the parsed form.
    const formKey = newKey();
    const form = { partnerCode: 'ACME', memberId: `M-idem-${keyCounter}`, assetIntegrationId: 'A-idem', productType: 'PLUS', firstName: 'Dana', lastName: 'Reyes', state: 'IL', zip: '60606', make: 'honda', year: '2021', vin: '1HGCM82633A777777', effectiveEndDate: '2030-12-31' };
    const firstForm = await send('POST', `${RS}/ars_provisioning_v1/formpost`, formKey, { form });
    expect(firstForm.status, JSON.stringify(firstForm.body)).toBe(201);
    const rowsBefore = await countRows(t.stack);
    expectSameAnswer(await send('POST', `${RS}/ars_provisioning_v1/formpost`, formKey, { form }), firstForm);
    expect(await countRows(t.stack)).toEqual(rowsBefore);
  });

  it('POST users/{id}/sourcea-mvr (a raw body) stores one report', async () => {
    expect((await t.request('POST', `${SMI}/users`, { token: t.token, body: { userId: 'idem-mvr', dateOfBirth: '1988-02-11', homeZip: '60601' } })).status).toBe(201);
    const key = newKey();
    const report = JSON.stringify(sourceAFull());
    const first = await send('POST', `${SMI}/users/idem-mvr/sourcea-mvr`, key, { body: report });
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const records = (await countRows(t.stack))['scoring.MvrRecord'];
    expectSameAnswer(await send('POST', `${SMI}/users/idem-mvr/sourcea-mvr`, key, { body: report }), first);
    expect((await countRows(t.stack))['scoring.MvrRecord']).toBe(records);
    // The raw text is the request: the same report with other spacing is another request.
    expectProblem(await send('POST', `${SMI}/users/idem-mvr/sourcea-mvr`, key, { body: JSON.stringify(sourceAFull(), null, 2) }), 422, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('POST registration users and vehicles and SMI users with generated ids', async () => {
    for (const [path, body] of [[`${REG}/users`, {}], [`${REG}/vehicles`, { vin: VIN, make: 'Honda', model: 'Accord', year: 2021 }], [`${SMI}/users`, { homeZip: '60601' }]] as const) {
      const key = newKey();
      const first = await send('POST', path, key, { body });
      expect(first.status, `${path}: ${JSON.stringify(first.body)}`).toBe(201);
      const before = await countRows(t.stack);
      const retry = await send('POST', path, key, { body });
      expectSameAnswer(retry, first);
      expect(await countRows(t.stack), path).toEqual(before);
    }
  });

  it('every POST and PATCH path of the REST table replays its first answer and changes nothing more', async () => {
    const member = await provision(t, t.token);
    const sessionId = await session(t, t.token, [{ key: 'vin', value: member.vin }]);
    const rescue = await dispatch(t, t.token, sessionId, 'tow', { towDestination: CHICAGO });
    const reqId = rescue.body.requestId ?? rescue.body.reqId;
    const params: Record<string, string> = { userId: 'idem-sweep', vin: '1HGCM82633A004999', imei: '356938035643800', reqId, productName: 'Driving Behavior' };
    expect((await t.request('POST', `${SMI}/users`, { token: t.token, body: { userId: 'idem-sweep', homeZip: '60601' } })).status).toBe(201);
    expect((await t.request('POST', `${REG}/users`, { token: t.token, body: { userId: 'idem-sweep' } })).status).toBe(201);
    const fill = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(fill);
      if (value && typeof value === 'object') {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'sessionId' ? sessionId : k === 'requestId' ? reqId : ['userId', 'userID'].includes(k) ? 'idem-sweep' : fill(v)]));
      }
      return value;
    };
    const routes = restRoutes.filter((r) => r.method === 'POST' || r.method === 'PATCH');
    const answered: string[] = [];
    for (const route of routes) {
      const path = route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(params[name]));
      const example = fill(route.docs?.requestExample ?? {});
      const body = route.rawBody ? JSON.stringify(example) : example;
      const key = newKey();
      const first = await send(route.method, path, key, { body });
      expect(first.status, `${route.method} ${route.path}: ${JSON.stringify(first.body)}`).toBeLessThan(500);
      const before = await countRows(t.stack);
      const retry = await send(route.method, path, key, { body });
      // Refusals of the caller (a live token on the sandbox reset) are not kept: the retry is refused afresh.
      if ([401, 403, 429].includes(first.status)) {
        expect([retry.status, retry.headers.get('idempotent-replayed')]).toEqual([first.status, null]);
      } else expectSameAnswer(retry, first);
      expect(await countRows(t.stack), `${route.method} ${route.path}`).toEqual(before);
      answered.push(`${first.status} ${route.method} ${route.path}`);
    }
    expect(answered.length).toBe(routes.length);
    expect(answered.length).toBeGreaterThanOrEqual(25);
    // Most examples succeed against the fixtures; the rest are replayed refusals, which is as it should be.
    expect(answered.filter((line) => line.startsWith('2')).length).toBeGreaterThanOrEqual(15);
    console.log(`idempotency sweep: ${answered.length} POST/PATCH routes replayed their first answer\n  ${answered.join('\n  ')}`);
  });
});

describe('what a key refuses', () => {
  it('the same key with another body, path or method is 422, and the key keeps its first answer', async () => {
    const key = newKey();
    const first = await send('POST', `${REG}/users`, key, { body: { userId: 'idem-422' } });
    expect(first.status).toBe(201);
    const other = await send('POST', `${REG}/users`, key, { body: { userId: 'idem-422-b' } });
    expectProblem(other, 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(other.body.field).toBe('Idempotency-Key');
    expectProblem(await send('POST', `${SMI}/users`, key, { body: { userId: 'idem-422' } }), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect((await countRows(t.stack))['registration.RegisteredUser']).toBeGreaterThan(0);
    expect((await t.request('GET', `${REG}/users/idem-422-b`, { token: t.token })).status).toBe(404);
    expectSameAnswer(await send('POST', `${REG}/users`, key, { body: { userId: 'idem-422' } }), first);
  });

  it('a duplicate while the first request is still running is 409 with Retry-After; once it completes, the answer is replayed', async () => {
    const key = newKey();
    const body = { userId: 'idem-409' };
    const { requestFingerprint } = await import('../../gateway/idempotency/request.ts');
    // The first request is "running": its key is claimed, as the gateway does before executing it.
    const fingerprint = requestFingerprint('POST', `${REG}/users`, body);
    const claim = await t.stack.gateway.idempotency.claim({ clientId: DEFAULT_CLIENT.id, organisation: DEFAULT_CLIENT.org }, { key, fingerprint, scopes: ['b2b'] });
    expect(claim.kind).toBe('claimed');
    const duplicate = await send('POST', `${REG}/users`, key, { body });
    expectProblem(duplicate, 409, 'CONFLICT');
    expect(duplicate.headers.get('retry-after')).toBe('1');
    expect((await t.request('GET', `${REG}/users/idem-409`, { token: t.token })).status).toBe(404);
    await t.stack.gateway.idempotency.complete((claim as { id: string }).id, { status: 201, headers: { 'content-type': 'application/json; charset=utf-8' }, body: Buffer.from('{"userId":"idem-409"}') });
    const replay = await send('POST', `${REG}/users`, key, { body });
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual({ userId: 'idem-409' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('a burst of identical requests under one key runs once: one record, the rest 409 or the same answer', async () => {
    const key = newKey();
    const body = { homeZip: '60601' };
    const before = (await countRows(t.stack))['scoring.User'];
    const burst = 40;
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: burst }, () => send('POST', `${SMI}/users`, key, { body })));
    const ms = performance.now() - started;
    expect((await countRows(t.stack))['scoring.User']).toBe(before + 1);
    const executed = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null);
    const replayed = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === 'true');
    const conflicts = answers.filter((a) => a.status === 409);
    expect(executed).toHaveLength(1);
    expect(replayed.length + conflicts.length).toBe(burst - 1);
    for (const answer of replayed) expect(answer.body).toEqual(executed[0].body);
    for (const answer of conflicts) expect(answer.body.code).toBe('CONFLICT');
    console.log(`idempotency burst: ${burst} concurrent identical POST ${SMI}/users with one key -> 1 executed, ${conflicts.length} x 409 (still running), ${replayed.length} replayed; 1 user created; ${ms.toFixed(0)} ms`);
  });

  it('the store: a key whose request never finished is taken over once abandoned; only the claim\'s owner completes it', async () => {
    const store = t.stack.gateway.idempotency;
    const owner = { clientId: 'store-client', organisation: 'store-org' };
    const scopes = ['b2b'];
    const key = newKey();
    const start = new Date();
    const first = await store.claim(owner, { key, fingerprint: 'f1', scopes }, start);
    expect(first.kind).toBe('claimed');
    expect((await store.claim(owner, { key, fingerprint: 'f1', scopes }, new Date(start.getTime() + ABANDONED_AFTER_MS - 1000))).kind).toBe('in_progress');
    expect((await store.claim(owner, { key, fingerprint: 'f2', scopes }, new Date(start.getTime() + 1000))).kind).toBe('mismatch');
    const later = new Date(start.getTime() + ABANDONED_AFTER_MS + 1000);
    const takeover = await store.claim(owner, { key, fingerprint: 'f1', scopes }, later);
    expect(takeover).toEqual(first);
    // Taken over once: a second latecomer waits for the new runner.
    expect((await store.claim(owner, { key, fingerprint: 'f1', scopes }, later)).kind).toBe('in_progress');
    await store.complete((takeover as { id: string }).id, { status: 201, headers: { location: '/x' }, body: Buffer.from('{"ok":true}') });
    const replay = await store.claim(owner, { key, fingerprint: 'f1', scopes }, later);
    expect(replay).toEqual({ kind: 'replay', response: { status: 201, headers: { location: '/x' }, body: Buffer.from('{"ok":true}') } });
    // Released keys run again.
    const other = newKey();
    const claim = await store.claim(owner, { key: other, fingerprint: 'f1', scopes });
    await store.release((claim as { id: string }).id);
    expect((await store.claim(owner, { key: other, fingerprint: 'f2', scopes })).kind).toBe('claimed');
  });

  it('does not keep a refusal of the caller (missing scope): the same key runs once the token allows it', async () => {
    const client = await t.clientFor('org-idem-scope');
    const narrow = await t.request('POST', '/platform/oauth/v1/token', { form: { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret, scope: 'b2b' } });
    expect(narrow.status).toBe(200);
    const key = newKey();
    const body = { appId: 'idem-app', benefits: [{ key: 'vin', value: VIN }], otherInfo: [{ key: 'ppuflag', value: 'N' }] };
    expectProblem(await send('POST', `${RS}/rescue/session`, key, { body, token: narrow.body.access_token }), 403, 'FORBIDDEN');
    const allowed = await send('POST', `${RS}/rescue/session`, key, { body, token: client.token });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(201);
    expect(allowed.headers.get('idempotent-replayed')).toBeNull();
  });

  it('validates the key: 1 to 255 printable characters, bare or quoted', async () => {
    const body = { userId: 'idem-syntax' };
    for (const bad of ['"', '""', `${'k'.repeat(256)}`, '"unterminated', 'caf\u00e9']) {
      const res = await t.request('POST', `${REG}/users`, { token: t.token, body, headers: { 'idempotency-key': bad } });
      expectProblem(res, 400, 'BAD_USER_INPUT');
      expect(res.body.field).toBe('Idempotency-Key');
    }
    expect((await t.request('GET', `${REG}/users/idem-syntax`, { token: t.token })).status).toBe(404);
    // A bare key and the same key quoted are one key.
    const bare = newKey();
    const first = await t.request('POST', `${REG}/users`, { token: t.token, body, headers: { 'idempotency-key': bare } });
    expect(first.status).toBe(201);
    expectSameAnswer(await send('POST', `${REG}/users`, bare, { body }), first);
    const longest = await t.request('POST', `${REG}/users`, { token: t.token, body: {}, headers: { 'idempotency-key': 'k'.repeat(255) } });
    expect(longest.status).toBe(201);
  });

  it('keys belong to a client and organisation: another organisation\'s same key and body is its own request', async () => {
    const key = newKey();
    const body = { homeZip: '60601' };
    const mine = await send('POST', `${SMI}/users`, key, { body });
    const other = await t.clientFor('org-idem-b');
    const theirs = await send('POST', `${SMI}/users`, key, { body, token: other.token });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(theirs.body.userId).not.toBe(mine.body.userId);
    // Another client of the same organisation has its own keys too.
    const sibling = await t.clientFor(DEFAULT_CLIENT.org);
    const again = await send('POST', `${SMI}/users`, key, { body, token: sibling.token });
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(again.body.userId).not.toBe(mine.body.userId);
  });

  it('keeps response bodies encrypted at rest, and deletes expired keys (after which the key is new)', async () => {
    const key = newKey();
    const body = { dateOfBirth: '1979-05-17', homeZip: '60601' };
    const first = await send('POST', `${SMI}/users`, key, { body });
    expect(first.status).toBe(201);
    expect(JSON.stringify(first.body)).toContain('1979-05-17');
    const row = (await idempotencyRows()).find((r) => r.key === key)!;
    expect(row).toMatchObject({ state: 'done', status: 201, clientId: DEFAULT_CLIENT.id, organisation: DEFAULT_CLIENT.org });
    const stored = Buffer.from(row.bodyCiphertext!);
    for (const plain of [first.body.userId, '1979-05-17', Buffer.from(JSON.stringify(first.body)).toString('base64').slice(0, 12)]) expect(stored.includes(plain)).toBe(false);
    expect(row.expiresAt.getTime() - row.createdAt.getTime()).toBe(RETENTION_MS);

    const purged = await t.stack.gateway.idempotency.purgeExpired(new Date(Date.now() + RETENTION_MS + 60_000));
    expect(purged).toBeGreaterThanOrEqual(1);
    expect((await idempotencyRows()).find((r) => r.key === key)).toBeUndefined();
    const after = await send('POST', `${SMI}/users`, key, { body });
    expect(after.status).toBe(201);
    expect(after.headers.get('idempotent-replayed')).toBeNull();
    expect(after.body.userId).not.toBe(first.body.userId);
  });

  it('counts outcomes in /metrics', async () => {
    const metrics = await t.request('GET', '/metrics');
    const value = (outcome: string) => Number(new RegExp(`^gateway_idempotency_requests_total\\{outcome="${outcome}"\\} (\\d+)`, 'm').exec(metrics.body)?.[1] ?? 0);
    // Earlier tests of this file ran keys, replayed them, and sent duplicates and reused and malformed keys.
    for (const outcome of ['claimed', 'replay', 'mismatch', 'invalid']) expect(value(outcome), outcome).toBeGreaterThan(0);
  });

  it('requests without a key, GET requests and GraphQL queries are untouched', async () => {
    const rows = (await idempotencyRows()).length;
    const get = await t.request('GET', `${REG}/users/idem-422`, { token: t.token, headers: { 'idempotency-key': newKey() } });
    expect(get.status).toBe(200);
    const query = await t.request('POST', '/graphql', { token: t.token, body: { query: '{ __typename }' }, headers: { 'idempotency-key': newKey() } });
    expect(query.status).toBe(200);
    expect((await idempotencyRows()).length).toBe(rows);
  });
});

describe('GraphQL mutations', () => {
  const createUser = 'mutation Create($zip: ZipCode) { createUser(input: { homeZip: $zip }) { userId homeZip } }';

  it('replays a mutation under the same key (one user), refuses another document under it, and stores no server error', async () => {
    const key = newKey();
    const gql = (query: string, variables: Record<string, unknown>, k = key) => t.request('POST', '/graphql', { token: t.token, body: { query, variables }, headers: { 'idempotency-key': k } });
    const first = await gql(createUser, { zip: '60601' });
    expect(first.status).toBe(200);
    expect(first.body.data.createUser.userId).toBeTruthy();
    const before = (await countRows(t.stack))['scoring.User'];
    const replay = await gql(createUser, { zip: '60601' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect((await countRows(t.stack))['scoring.User']).toBe(before);

    const mismatch = await gql(createUser, { zip: '60602' });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.errors[0].extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');

    const bad = await t.request('POST', '/graphql', { token: t.token, body: { query: createUser, variables: {} }, headers: { 'idempotency-key': '' } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });
});

describe('GraphQL mutations sent as automatic persisted queries (by hash)', () => {
  /** A mutation text of its own per test, so that no other test has put it in the APQ cache. */
  const createUser = (name: string) => `mutation ${name}($zip: ZipCode) { createUser(input: { homeZip: $zip }) { userId homeZip } }`;
  const apq = (query: string) => ({ persistedQuery: { version: 1, sha256Hash: createHash('sha256').update(query).digest('hex') } });
  /** POST /graphql as Apollo Client sends it: the hash alone (`text` omitted) or the text with its hash. */
  const post = (key: string, text: string, variables: Record<string, unknown>, hashOnly: boolean, withHash = true) => t.request('POST', '/graphql', {
    token: t.token, headers: { 'idempotency-key': key },
    body: { ...(hashOnly ? {} : { query: text }), ...(withHash ? { extensions: apq(text) } : {}), variables, operationName: /mutation (\w+)/.exec(text)![1] },
  });
  const users = async () => (await countRows(t.stack))['scoring.User'];

  it('a hash-only mutation sent twice under one key runs once; other variables under the key are refused', async () => {
    const text = createUser('ApqTwice');
    // Apollo Client's first send of a new document: the hash, then the text (here without a key, as another call).
    await post(newKey(), text, { zip: '60601' }, false);
    const key = newKey();
    const before = await users();
    const first = await post(key, text, { zip: '60602' }, true);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.data.createUser.homeZip).toBe('60602');
    expect(await users()).toBe(before + 1);
    const replay = await post(key, text, { zip: '60602' }, true);
    expectSameAnswer(replay, first);
    expect(await users()).toBe(before + 1);
    const other = await post(key, text, { zip: '60603' }, true);
    expect(other.status).toBe(422);
    expect(other.body.errors[0].extensions.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await users()).toBe(before + 1);
  });

  it('PERSISTED_QUERY_NOT_FOUND is not kept: the full-text retry under the same key runs, and is what a later hash-only send replays', async () => {
    const text = createUser('ApqRetry');
    const key = newKey();
    const before = await users();
    const notFound = await post(key, text, { zip: '60604' }, true);
    expect(notFound.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    expect((await idempotencyRows()).find((r) => r.key === key)).toBeUndefined();
    const retry = await post(key, text, { zip: '60604' }, false);
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect(retry.body.data.createUser.homeZip).toBe('60604');
    expect((await idempotencyRows()).find((r) => r.key === key)?.state).toBe('done');
    expect(await users()).toBe(before + 1);
    expectSameAnswer(await post(key, text, { zip: '60604' }, true), retry);
    expect(await users()).toBe(before + 1);
  });

  it('the full text without a hash, then the hash alone under the same key: one operation, replayed', async () => {
    const text = createUser('ApqTextFirst');
    const key = newKey();
    const before = await users();
    const first = await post(key, text, { zip: '60605' }, false, false);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    // The text is in the APQ cache once a send carried its hash (Apollo registers only then).
    await post(newKey(), text, { zip: '60606' }, false);
    expect(await users()).toBe(before + 2);
    expectSameAnswer(await post(key, text, { zip: '60605' }, true), first);
    expect(await users()).toBe(before + 2);
  });

  it('GET never runs a mutation, by text or by hash, and keeps nothing', async () => {
    const text = createUser('ApqGet');
    await post(newKey(), text, { zip: '60607' }, false);
    const before = await users();
    const rows = (await idempotencyRows()).length;
    const variables = JSON.stringify({ zip: '60607' });
    for (const params of [{ query: text, variables }, { extensions: JSON.stringify(apq(text)), variables }] as Record<string, string>[]) {
      const res = await t.request('GET', `/graphql?${new URLSearchParams(params)}`, { token: t.token, headers: { 'idempotency-key': newKey(), 'apollo-require-preflight': 'true' } });
      expect(res.status, JSON.stringify(res.body)).toBe(405);
      expect(res.body.errors[0].message).toMatch(/only support query/);
    }
    expect(await users()).toBe(before);
    expect((await idempotencyRows()).length).toBe(rows);
  });
});

describe('JSON answers end with a newline (curl prints each on its own line)', () => {
  /** The raw bytes of an answer, as a client reads them. */
  async function raw(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
    const response = await fetch(`${t.url}${path}`, { method, headers: { authorization: `Bearer ${t.token}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers }, body });
    const bytes = Buffer.from(await response.arrayBuffer());
    return { status: response.status, type: response.headers.get('content-type'), length: response.headers.get('content-length'), replayed: response.headers.get('idempotent-replayed'), bytes };
  }

  it('on JSON, problem and GraphQL answers, and a replay repeats the same bytes', async () => {
    const key = { 'idempotency-key': `"${newKey()}"` };
    const first = await raw('POST', `${SMI}/users`, key, JSON.stringify({ homeZip: '60601' }));
    const replay = await raw('POST', `${SMI}/users`, key, JSON.stringify({ homeZip: '60601' }));
    expect(first.status).toBe(201);
    expect(first.type).toMatch(/^application\/json/);
    expect(first.bytes.toString()).toMatch(/^\{.*\}\n$/s);
    expect(JSON.parse(first.bytes.toString())).toHaveProperty('userId');
    expect(first.length).toBe(String(first.bytes.length));
    expect(replay.replayed).toBe('true');
    expect(replay.bytes.equals(first.bytes)).toBe(true);
    expect(replay.length).toBe(first.length);

    const missing = await raw('GET', `${SMI}/users/newline-nobody`);
    expect(missing.status).toBe(404);
    expect(missing.type).toMatch(/^application\/problem\+json/);
    expect(missing.bytes.toString()).toMatch(/^\{.*\}\n$/s);
    expect(missing.length).toBe(String(missing.bytes.length));

    const graphql = await raw('POST', '/graphql', {}, JSON.stringify({ query: '{ __typename }' }));
    expect(graphql.bytes.toString()).toBe('{"data":{"__typename":"Query"}}\n');
  });
});

describe('OpenAPI', () => {
  it('documents the header, the replay marker and the 403, 409 and 422 answers on every POST and PATCH path, and on no other', () => {
    const doc = buildOpenApi(restRoutes) as unknown as { paths: Record<string, Record<string, { parameters: { name: string; in: string }[]; responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>> };
    let documented = 0;
    const secrets: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const header = operation.parameters?.some((p) => p.name === 'Idempotency-Key' && p.in === 'header');
        if (!['post', 'patch'].includes(method) || /\/oauth\//.test(path)) {
          expect(header, `${method} ${path}`).toBeFalsy();
          continue;
        }
        expect(header, `${method} ${path}`).toBe(true);
        expect(operation.responses['409'].description, `${method} ${path}`).toMatch(/Idempotency-Key is still running/);
        expect(operation.responses['422'].description, `${method} ${path}`).toMatch(/IDEMPOTENCY_KEY_REUSED/);
        expect(operation.responses['403'].description, `${method} ${path}`).toMatch(/lacks a scope of the token that made the request/);
        const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))![1];
        // An answer with a secret is never replayed: 409 IDEMPOTENT_SECRET_NOT_REPLAYED instead, and never cached.
        if (/IDEMPOTENT_SECRET_NOT_REPLAYED/.test(operation.responses['409'].description)) {
          secrets.push(`${method} ${path}`);
          expect(success.headers, `${method} ${path}`).not.toHaveProperty('Idempotent-Replayed');
          expect(success.headers, `${method} ${path}`).toHaveProperty('Cache-Control');
        } else expect(success.headers, `${method} ${path}`).toHaveProperty('Idempotent-Replayed');
        documented += 1;
      }
    }
    const adminWrites = Object.values({ ...adminClientPaths, ...adminDocumentPaths, ...adminIssuerPaths }).flatMap((item) => Object.keys(item)).filter((m) => m === 'post' || m === 'patch').length;
    expect(documented).toBe(restRoutes.filter((r) => r.method === 'POST' || r.method === 'PATCH').length + adminWrites);
    expect(secrets.sort()).toEqual(['post /platform/admin/v1/clients', 'post /platform/admin/v1/clients/{clientId}/rotate', 'post /platform/webhooks/v1/subscriptions',
      'post /platform/webhooks/v1/subscriptions/{id}/rotate-secret']);
  });

  it('gives the header no example value, which Swagger UI would pre-fill on every Try it out (a replay or a 422 the second time)', () => {
    const text = JSON.stringify(idempotencyKeyParameter);
    expect(idempotencyKeyParameter).not.toHaveProperty('example');
    expect(idempotencyKeyParameter).not.toHaveProperty('examples');
    expect(idempotencyKeyParameter.schema).toMatchObject({ type: 'string', minLength: 1 });
    expect(idempotencyKeyParameter.schema).not.toHaveProperty('format');
    expect(text).not.toMatch(/"(example|examples|default)"/);
    expect(idempotencyKeyParameter.description).toMatch(/fresh UUID per logical operation/);
  });
});

describe('after a restart, and when a subgraph is down', () => {
  let p: TestStack;
  beforeAll(async () => { p = await startTestStack({ subgraphs: ['scoring', 'registration'], persistent: true }); }, 300_000);
  afterAll(async () => { await p?.close(); });

  it('replays REST and GraphQL answers stored before the restart', async () => {
    const key = newKey();
    const gqlKey = newKey();
    const rest = () => p.request('POST', `${SMI}/users`, { token: p.token, body: { homeZip: '60601' }, headers: { 'idempotency-key': key } });
    const gql = () => p.request('POST', '/graphql', { token: p.token, body: { query: 'mutation { registerUser(input: {}) { userId } }' }, headers: { 'idempotency-key': gqlKey } });
    const first = await rest();
    const firstGql = await gql();
    expect(first.status).toBe(201);
    expect(firstGql.status, JSON.stringify(firstGql.body)).toBe(200);
    await p.restart();
    const before = await countRows(p.stack);
    const replay = await rest();
    const replayGql = await gql();
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(replayGql.headers.get('idempotent-replayed')).toBe('true');
    expect(replayGql.body).toEqual(firstGql.body);
    expect(await countRows(p.stack)).toEqual(before);
  });

  it('does not keep a 5xx answer: the key is free for the retry', async () => {
    const key = newKey();
    const body = { appId: 'idem-app', benefits: [{ key: 'vin', value: VIN }] };
    const down = await p.request('POST', `${RS}/rescue/session`, { token: p.token, body, headers: { 'idempotency-key': key } });
    expectProblem(down, 503, 'SERVICE_UNAVAILABLE');
    expect((await idempotencyRows(p.stack)).find((r) => r.key === key)).toBeUndefined();
    const again = await p.request('POST', `${RS}/rescue/session`, { token: p.token, body, headers: { 'idempotency-key': key } });
    expect(again.status).toBe(503);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
  });
});
