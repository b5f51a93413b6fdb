import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack } from '../support/shared-stack.ts';
import type { TestStack } from '../support/stack.ts';

const USERS = '/shared-mobility-insights/v2/users';
let t: TestStack;

beforeAll(async () => { t = await sharedTestStack({ subgraphs: ['scoring'] }); });
afterAll(async () => { await t?.close(); });

describe('users through REST', () => {
  it('creates a user with a generated id, pending, and both id spellings', async () => {
    const res = await t.request('POST', USERS, { token: t.token, body: {} });
    expect(res.status).toBe(201);
    expect(res.body.userId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.userID).toBe(res.body.userId);
    expect(res.body.enrollmentStatus).toBe('pending');
    const nullId = await t.request('POST', USERS, { token: t.token, body: { userID: null } });
    expect(nullId.status).toBe(201);
    expect(nullId.body.userId).not.toBe(res.body.userId);
  });

  it('accepts userID or userId and any non-empty id as given; the same id twice is 409', async () => {
    const a = await t.request('POST', USERS, { token: t.token, body: { userID: 'weird id/ü 1' } });
    expect(a.status).toBe(201);
    expect(a.body.userId).toBe('weird id/ü 1');
    const b = await t.request('POST', USERS, { token: t.token, body: { userId: 'weird id/ü 1' } });
    expect(b.status).toBe(409);
    expect(b.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(b.body).toMatchObject({ status: 409, code: 'CONFLICT' });
    const empty = await t.request('POST', USERS, { token: t.token, body: { userId: '  ' } });
    expect(empty.status).toBe(400);
  });

  it('creates with the id in the path, and refuses a contradicting body id', async () => {
    const res = await t.request('POST', `${USERS}/path-user`, { token: t.token, body: { homeZip: '60601-1234' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ userId: 'path-user', userID: 'path-user', homeZip: '60601-1234' });
    const clash = await t.request('POST', `${USERS}/path-user-2`, { token: t.token, body: { userID: 'other' } });
    expect(clash.status).toBe(400);
  });

  it('validates dateOfBirth (real past day) and homeZip, writing nothing on bad input', async () => {
    for (const body of [{ dateOfBirth: '1990-02-30' }, { dateOfBirth: '1990-2-3' }, { dateOfBirth: '2999-01-01' }, { homeZip: '6060' }, { homeZip: '60601-12' }, { homeZip: 60601 }]) {
      const res = await t.request('POST', USERS, { token: t.token, body: { userId: `bad-${JSON.stringify(body)}`, ...body } });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('BAD_USER_INPUT');
      expect(res.body.field).toMatch(/dateOfBirth|homeZip/);
      const get = await t.request('GET', `${USERS}/${encodeURIComponent(`bad-${JSON.stringify(body)}`)}`, { token: t.token });
      expect(get.status).toBe(404);
    }
    const notObject = await t.request('POST', USERS, { token: t.token, body: '[1,2]' });
    expect(notObject.status).toBe(400);
    const badJson = await t.request('POST', USERS, { token: t.token, body: '{"userId":' });
    expect(badJson.status).toBe(400);
    expect(badJson.headers.get('content-type')).toMatch(/problem\+json/);
  });

  it('PUT replaces the mutable fields, PATCH changes only those sent', async () => {
    await t.request('POST', USERS, { token: t.token, body: { userId: 'upd', dateOfBirth: '1980-05-05', homeZip: '94105' } });
    const patch = await t.request('PATCH', `${USERS}/upd`, { token: t.token, body: { homeZip: '60601' } });
    expect(patch.status).toBe(200);
    expect(patch.body).toMatchObject({ dateOfBirth: '1980-05-05', homeZip: '60601' });
    const put = await t.request('PUT', `${USERS}/upd`, { token: t.token, body: { homeZip: '10001' } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ dateOfBirth: null, homeZip: '10001' });
    const get = await t.request('GET', `${USERS}/upd`, { token: t.token });
    expect(get.body).toMatchObject({ dateOfBirth: null, homeZip: '10001' });
    expect((await t.request('PATCH', `${USERS}/nobody`, { token: t.token, body: {} })).status).toBe(404);
  });

  it('enrollUser takes any case, any order; bad values are 400', async () => {
    await t.request('POST', USERS, { token: t.token, body: { userId: 'enr' } });
    for (const [value, expected] of [['ACCEPTED', 'accepted'], ['Rejected', 'rejected'], ['pending', 'pending'], ['accepted', 'accepted']]) {
      const res = await t.request('PUT', `${USERS}/enr/enrollment`, { token: t.token, body: { enrollmentStatus: value } });
      expect(res.status).toBe(200);
      expect(res.body.enrollmentStatus).toBe(expected);
    }
    expect((await t.request('PUT', `${USERS}/enr/enrollment`, { token: t.token, body: { enrollmentStatus: 'maybe' } })).status).toBe(400);
    expect((await t.request('PUT', `${USERS}/enr/enrollment`, { token: t.token, body: {} })).status).toBe(400);
    expect((await t.request('PUT', `${USERS}/ghost/enrollment`, { token: t.token, body: { enrollmentStatus: 'accepted' } })).status).toBe(404);
  });
});

describe('users through GraphQL', () => {
  it('creates, updates, enrolls and reads a user', async () => {
    const created = await t.graphql('mutation { createUser(input: { userId: "gq-1", homeZip: "60601" }) { userId userID enrollmentStatus } }');
    expect(created.data.createUser).toEqual({ userId: 'gq-1', userID: 'gq-1', enrollmentStatus: 'PENDING' });
    const updated = await t.graphql('mutation($i: UpdateUserInput!) { updateUser(userId: "gq-1", input: $i) { dateOfBirth homeZip } }', { i: { dateOfBirth: '1975-12-31' } });
    expect(updated.data.updateUser).toEqual({ dateOfBirth: '1975-12-31', homeZip: '60601' });
    const enrolled = await t.graphql('mutation { enrollUser(userId: "gq-1", status: REJECTED) { enrollmentStatus } }');
    expect(enrolled.data.enrollUser.enrollmentStatus).toBe('REJECTED');
    const read = await t.graphql('{ user(userId: "gq-1") { userId dateOfBirth enrollmentStatus } }');
    expect(read.data.user).toEqual({ userId: 'gq-1', dateOfBirth: '1975-12-31', enrollmentStatus: 'REJECTED' });
  });

  it('answers bad input with BAD_USER_INPUT and a duplicate with CONFLICT', async () => {
    const bad = await t.graphql('mutation($i: CreateUserInput) { createUser(input: $i) { userId } }', { i: { homeZip: 'abc' } });
    expect(bad.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    await t.graphql('mutation { createUser(input: { userId: "gq-dup" }) { userId } }');
    const dup = await t.graphql('mutation { createUser(input: { userId: "gq-dup" }) { userId } }');
    expect(dup.errors?.[0].extensions?.code).toBe('CONFLICT');
  });
});

describe('organisation isolation and tokens', () => {
  it('another organisation can neither see nor change a user, and may reuse its id', async () => {
    await t.request('POST', USERS, { token: t.token, body: { userId: 'iso-1', homeZip: '60601' } });
    const other = await t.clientFor('org-b');
    expect((await t.request('GET', `${USERS}/iso-1`, { token: other.token })).status).toBe(404);
    expect((await t.request('PATCH', `${USERS}/iso-1`, { token: other.token, body: { homeZip: '99999' } })).status).toBe(404);
    expect((await t.request('PUT', `${USERS}/iso-1/enrollment`, { token: other.token, body: { enrollmentStatus: 'accepted' } })).status).toBe(404);
    const gql = await t.graphql('{ user(userId: "iso-1") { userId } }', {}, other.token);
    expect(gql.data.user).toBeNull();
    const mine = await t.request('POST', USERS, { token: other.token, body: { userId: 'iso-1' } });
    expect(mine.status).toBe(201);
    const original = await t.request('GET', `${USERS}/iso-1`, { token: t.token });
    expect(original.body).toMatchObject({ homeZip: '60601', enrollmentStatus: 'pending' });
  });

  it('refuses a missing, malformed, expired, not-yet-valid, foreign-signed, other-issuer or alg:none token with 401', async () => {
    const { SignJWT, generateKeyPair } = await import('jose');
    const { importPKCS8 } = await import('jose');
    const { readFile } = await import('node:fs/promises');
    const own = await importPKCS8(await readFile(`${t.config.dataDir}/keys/jwt-private.pem`, 'utf8'), 'EdDSA');
    const claims = { org: t.org, scope: 'b2b' };
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA' }).setSubject(t.client.id).setIssuer(t.config.JWT_ISSUER)
      .setAudience(t.config.JWT_ISSUER).setIssuedAt(now - 7200).setExpirationTime(now - 3600).sign(own);
    const foreign = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA' }).setSubject(t.client.id).setIssuer(t.config.JWT_ISSUER)
      .setAudience(t.config.JWT_ISSUER).setIssuedAt(now).setExpirationTime(now + 3600).sign((await generateKeyPair('EdDSA')).privateKey);
    const notYetValid = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA' }).setSubject(t.client.id).setIssuer(t.config.JWT_ISSUER)
      .setAudience(t.config.JWT_ISSUER).setIssuedAt(now).setNotBefore(now + 600).setExpirationTime(now + 3600).sign(own);
    const otherIssuer = await new SignJWT(claims).setProtectedHeader({ alg: 'EdDSA' }).setSubject(t.client.id).setIssuer('someone-else')
      .setAudience(t.config.JWT_ISSUER).setIssuedAt(now).setExpirationTime(now + 3600).sign(own);
    const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const algNone = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, sub: t.client.id, iss: t.config.JWT_ISSUER, aud: t.config.JWT_ISSUER, iat: now, exp: now + 3600 })}.`;
    for (const token of [null, 'not-a-jwt', expired, foreign, notYetValid, otherIssuer, algNone]) {
      const res = await t.request('GET', `${USERS}/iso-1`, { token });
      expect(res.status, String(token).slice(0, 20)).toBe(401);
      expect(res.body.code).toBe('UNAUTHENTICATED');
      const gql = await t.graphql('{ user(userId: "iso-1") { userId } }', {}, token);
      expect(gql.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    }
    expect((await t.request('GET', `${USERS}/iso-1`, { token: expired })).body.detail).toMatch(/expired/);
  });

  it('refuses a token without the b2b scope with 403', async () => {
    const roadsideOnly = await t.clientFor('org-a', ['roadside']);
    const res = await t.request('GET', `${USERS}/iso-1`, { token: roadsideOnly.token });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
  });
});
