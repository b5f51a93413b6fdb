import { stat, readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack } from '../support/shared-stack.ts';
import type { TestStack } from '../support/stack.ts';
import { sourceAClean, sourceAFull, sourceALight, sourceBFull, sourceBLight } from './mvr-fixtures.ts';

const USERS = '/shared-mobility-insights/v2/users';
let t: TestStack;

beforeAll(async () => { t = await sharedTestStack({ subgraphs: ['scoring'] }); });
afterAll(async () => { await t?.close(); });

/** Posts report text as a partner would (content type application/json unless told). */
const postMvr = (userId: string, segment: 'sourcea-mvr' | 'sourceb-mvr', text: string, token: string | null = t.token, contentType = 'application/json') =>
  t.request('POST', `${USERS}/${encodeURIComponent(userId)}/${segment}`, { token, body: text, headers: { 'content-type': contentType } });

const createUser = (body: Record<string, unknown>) => t.request('POST', USERS, { token: t.token, body });

const records = async (userId: string) => {
  const res = await t.graphql('query($id: ID!) { user(userId: $id) { mvrRecords { id source report createdAt } } }', { id: userId });
  return res.data.user.mvrRecords as { id: string; source: string; report: string }[];
};

const score = (userId: string, token = t.token) => t.request('GET', `${USERS}/${encodeURIComponent(userId)}/prequal-coverage-score`, { token });

const rawRows = async (userId: string) => {
  const scoring = t.stack.subgraphs.find((s) => s.name === 'scoring');
  if (!scoring) throw new Error('scoring subgraph not in process');
  return scoring.db.orm.em.fork().getConnection().execute(
    `select t::text as row_text, report_ciphertext, key_id from "scoring"."mvr_records" t where user_id = ? order by seq`, [userId]);
};

/** Report text with spacing, key order, unicode escapes and extra fields a re-serialisation would change. */
const oddText = `{
  "violations" :[ ],   "accidents": [
      {"accident_date":"2023-11-20","at_fault":null, "note":"caf\\u00e9 \u00fc"}],
  "license_status":"VALID", "first_issued_date": "2001-01-01",
  "full_name": "Dana Reyes", "license_number": "D1234567", "points_total": 1.50, "vendor": {"x": [1,2,{"y":null}]}
}\n`;

describe('MVR intake through REST', () => {
  beforeAll(async () => {
    expect((await createUser({ userId: 'mvr-1', dateOfBirth: '1980-04-05', homeZip: '60601' })).status).toBe(201);
  });

  it('stores a full report and gives the exact bytes back from User.mvrRecords', async () => {
    const res = await postMvr('mvr-1', 'sourcea-mvr', oddText);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ userId: 'mvr-1', source: 'sourcea', summary: { license: { status: 'VALID' }, accidents: [{ date: '2023-11-20', atFault: null }] } });
    expect(res.body.mvrId).toMatch(/^[0-9a-f-]{36}$/);
    const [stored] = await records('mvr-1');
    expect(stored).toMatchObject({ id: res.body.mvrId, source: 'SOURCE_A' });
    expect(stored.report).toBe(oddText);
  });

  it('takes the body as sent whatever its content type', async () => {
    const text = JSON.stringify(sourceBFull(), null, 4);
    const res = await postMvr('mvr-1', 'sourceb-mvr', text, t.token, 'text/plain; charset=utf-8');
    expect(res.status).toBe(201);
    expect((await records('mvr-1'))[0].report).toBe(text);
  });

  it('refuses light reports of both sources with 400 saying a full MVR is required, storing nothing', async () => {
    const before = (await records('mvr-1')).length;
    for (const [segment, report] of [['sourcea-mvr', sourceALight()], ['sourceb-mvr', sourceBLight()], ['sourcea-mvr', { ...sourceAFull(), accidents: undefined }]] as const) {
      const res = await postMvr('mvr-1', segment, JSON.stringify(report));
      expect(res.status, segment).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 400, code: 'BAD_USER_INPUT', reason: 'LIGHT_MVR', field: 'report' });
      expect(res.body.detail).toMatch(/full MVR is required/);
    }
    expect(await records('mvr-1')).toHaveLength(before);
  });

  it('refuses invalid JSON and wrong types with 400 naming the path, storing nothing', async () => {
    const before = (await records('mvr-1')).length;
    const cases: [string, 'sourcea-mvr' | 'sourceb-mvr', string][] = [
      ['{"license_status": "VALID", "violations": [', 'sourcea-mvr', 'report'],
      ['', 'sourceb-mvr', 'report'],
      ['[1, 2]', 'sourcea-mvr', 'report'],
      [JSON.stringify({ ...sourceAFull(), violations: { S93: true } }), 'sourcea-mvr', 'report.violations'],
      [JSON.stringify({ ...sourceAFull(), accidents: [{ accident_date: '2023-02-30' }] }), 'sourcea-mvr', 'report.accidents[0].accident_date'],
      [JSON.stringify({ ...sourceBFull(), events: [{ eventType: 'ACCIDENT', eventDate: '2024-01-01', atFault: 'no' }] }), 'sourceb-mvr', 'report.events[0].atFault'],
      [JSON.stringify({ ...sourceBFull(), license: { ...sourceBFull().license, status: null } }), 'sourceb-mvr', 'report.license.status'],
    ];
    for (const [text, segment, field] of cases) {
      const res = await postMvr('mvr-1', segment, text);
      expect(res.status, text.slice(0, 60)).toBe(400);
      expect(res.body).toMatchObject({ code: 'BAD_USER_INPUT', field });
      expect(res.body.detail).not.toMatch(/full MVR is required/);
      expect(res.body.detail).not.toContain('D1234567');
    }
    expect(await records('mvr-1')).toHaveLength(before);
  });

  it('answers 404 for an unknown user and 401 without a token', async () => {
    const unknown = await postMvr('nobody', 'sourcea-mvr', JSON.stringify(sourceAFull()));
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('NOT_FOUND');
    expect((await postMvr('mvr-1', 'sourcea-mvr', JSON.stringify(sourceAFull()), null)).status).toBe(401);
    expect((await score('nobody')).status).toBe(404);
  });

  it('keeps another organisation out of a user\'s MVRs and score', async () => {
    const other = await t.clientFor('org-b');
    expect((await postMvr('mvr-1', 'sourcea-mvr', JSON.stringify(sourceAFull()), other.token)).status).toBe(404);
    expect((await score('mvr-1', other.token)).status).toBe(404);
    const gql = await t.graphql('{ user(userId: "mvr-1") { mvrRecords { id } } }', {}, other.token);
    expect(gql.data.user).toBeNull();
  });
});

describe('records are append-only and encrypted at rest', () => {
  it('scores from the most recently created record and never changes older ones', async () => {
    await createUser({ userId: 'latest', dateOfBirth: '1975-06-15', homeZip: '55401' });
    const clean = JSON.stringify(sourceAClean());
    const first = await postMvr('latest', 'sourcea-mvr', clean);
    const s1 = await score('latest');
    expect(s1.status).toBe(200);
    expect(s1.body).toMatchObject({ mvrId: first.body.mvrId, mvrSource: 'sourcea' });
    expect(s1.body.score).toBeGreaterThanOrEqual(600);

    const dui = sourceBFull();
    dui.events = [{ eventType: 'CONVICTION', acdCode: 'A21', eventDate: new Date(Date.now() - 200 * 86_400_000).toISOString().slice(0, 10), severity: 'MAJOR' }];
    const second = await postMvr('latest', 'sourceb-mvr', JSON.stringify(dui));
    const s2 = await score('latest');
    expect(s2.body).toMatchObject({ mvrId: second.body.mvrId, mvrSource: 'sourceb' });
    expect(s2.body.score).toBeLessThanOrEqual(300);
    expect(s2.body.reasonCodes[0]).toBe('ALCOHOL_DRUG_VIOLATION');

    const third = await postMvr('latest', 'sourcea-mvr', clean);
    const s3 = await score('latest');
    expect(s3.body.mvrId).toBe(third.body.mvrId);
    expect(s3.body.score).toBe(s1.body.score);

    const list = await records('latest');
    expect(list.map((r) => r.id)).toEqual([third.body.mvrId, second.body.mvrId, first.body.mvrId]);
    expect(list[2].report).toBe(clean);
    expect(list[1].report).toBe(JSON.stringify(dui));
  });

  it('keeps no plaintext in the table, and the database refuses updates', async () => {
    const rows = await rawRows('mvr-1');
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      const cipher = Buffer.from(row.report_ciphertext as Uint8Array);
      for (const secret of ['D1234567', 'Dana', 'Reyes', '1988-02-11', 'R200-4417-9921', 'license_status', 'VALID']) {
        expect(String(row.row_text)).not.toContain(secret);
        expect(cipher.toString('latin1')).not.toContain(secret);
        expect(cipher.toString('base64')).not.toContain(Buffer.from(secret).toString('base64').slice(0, 8));
      }
      expect(row.key_id).toMatch(/^[0-9a-f]{16}$/);
    }
    const key = await stat(`${t.config.dataDir}/keys/mvr-encryption.key`);
    expect(key.mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(`${t.config.dataDir}/keys/mvr-encryption.key`, 'utf8')).trim(), 'base64')).toHaveLength(32);

    const scoring = t.stack.subgraphs.find((s) => s.name === 'scoring');
    await expect(scoring!.db.orm.em.fork().getConnection().execute(`update "scoring"."mvr_records" set key_id = 'x' where user_id = 'mvr-1'`))
      .rejects.toThrow(/never updated/);
  });
});

describe('missing data and enrollment', () => {
  it('lists what is missing (422 over REST, MissingUserData over GraphQL) until updateUser and an MVR add it', async () => {
    await createUser({ userId: 'needs' });
    const res = await score('needs');
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 422, code: 'MISSING_DATA', missingFields: ['dateOfBirth', 'homeZip', 'mvr'] });
    expect(res.body.detail).toMatch(/dateOfBirth.*homeZip.*MVR/);

    const gql = await t.graphql('{ prequalCoverageScore(userId: "needs") { __typename ... on MissingUserData { userId missingFields message } } }');
    expect(gql.data.prequalCoverageScore).toMatchObject({ __typename: 'MissingUserData', userId: 'needs', missingFields: ['dateOfBirth', 'homeZip', 'mvr'] });

    await postMvr('needs', 'sourcea-mvr', JSON.stringify(sourceAClean()));
    await t.request('PATCH', `${USERS}/needs`, { token: t.token, body: { homeZip: '94105' } });
    expect((await score('needs')).body).toMatchObject({ status: 422, missingFields: ['dateOfBirth'] });
    await t.request('PATCH', `${USERS}/needs`, { token: t.token, body: { dateOfBirth: '1984-09-30' } });
    const scored = await score('needs');
    expect(scored.status).toBe(200);
    expect(scored.body.score).toBeGreaterThanOrEqual(0);
  });

  it('never changes the score when the enrollment status changes', async () => {
    await createUser({ userId: 'enrolled', dateOfBirth: '1992-03-03', homeZip: '10001' });
    await postMvr('enrolled', 'sourcea-mvr', JSON.stringify(sourceAFull()));
    const before = await score('enrolled');
    expect(before.status).toBe(200);
    for (const status of ['accepted', 'rejected', 'pending', 'ACCEPTED']) {
      expect((await t.request('PUT', `${USERS}/enrolled/enrollment`, { token: t.token, body: { enrollmentStatus: status } })).status).toBe(200);
      const after = await score('enrolled');
      expect(after.body).toEqual(before.body);
      const gql = await t.graphql('{ user(userId: "enrolled") { enrollmentStatus prequalCoverageScore { ... on PrequalCoverageScore { score mvrRecordId } } } }');
      expect(gql.data.user.prequalCoverageScore).toEqual({ score: before.body.score, mvrRecordId: before.body.mvrId });
    }
  });
});

describe('GraphQL createMvr', () => {
  it('takes the report as JSON or as text (exactly once) and refuses light and malformed ones', async () => {
    await t.graphql('mutation { createUser(input: { userId: "gq-mvr" }) { userId } }');
    const asJson = await t.graphql('mutation($r: JSON) { createMvr(userId: "gq-mvr", source: SOURCE_B, report: $r) { id source report summary { violations { acdCode category severity } } } }', { r: sourceBFull() });
    expect(asJson.errors).toBeUndefined();
    expect(asJson.data.createMvr.report).toBe(JSON.stringify(sourceBFull()));
    expect(asJson.data.createMvr.summary.violations).toEqual([{ acdCode: 'A21', category: 'ALCOHOL_DRUGS', severity: 'MAJOR' }]);

    const light = await t.graphql('mutation($r: JSON) { createMvr(userId: "gq-mvr", source: SOURCE_A, report: $r) { id } }', { r: sourceALight() });
    expect(light.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT', reason: 'LIGHT_MVR' } });
    expect(light.errors?.[0].message).toMatch(/full MVR is required/);

    const wrong = await t.graphql('mutation($t: String) { createMvr(userId: "gq-mvr", source: SOURCE_A, reportJson: $t) { id } }', { t: JSON.stringify({ ...sourceAFull(), violations: [{ violation_date: 5 }] }) });
    expect(wrong.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'report.violations[0].violation_date' });

    const both = await t.graphql('mutation($r: JSON, $t: String) { createMvr(userId: "gq-mvr", source: SOURCE_A, report: $r, reportJson: $t) { id } }', { r: sourceAFull(), t: '{}' });
    expect(both.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    const neither = await t.graphql('mutation { createMvr(userId: "gq-mvr", source: SOURCE_A) { id } }');
    expect(neither.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    const unknown = await t.graphql('mutation($r: JSON) { createMvr(userId: "ghost", source: SOURCE_A, report: $r) { id } }', { r: sourceAFull() });
    expect(unknown.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    expect(await records('gq-mvr')).toHaveLength(1);
  });
});

describe('the typical order of calls', () => {
  it('runs end to end through REST: token, createUser, updateUser, MVR, score, enrollUser, getUser', async () => {
    const tokenRes = await t.request('POST', '/platform/oauth/v1/token', { form: { grant_type: 'client_credentials', client_id: t.client.id, client_secret: t.client.secret, scope: 'b2b' } });
    expect(tokenRes.status).toBe(200);
    const token = tokenRes.body.access_token as string;

    const created = await t.request('POST', USERS, { token, body: {} });
    expect(created.status).toBe(201);
    const userId = created.body.userId as string;
    expect(created.body.enrollmentStatus).toBe('pending');

    const early = await t.request('GET', `${USERS}/${userId}/prequal-coverage-score`, { token });
    expect(early.status).toBe(422);
    expect(early.body.missingFields).toEqual(['dateOfBirth', 'homeZip', 'mvr']);

    const updated = await t.request('PUT', `${USERS}/${userId}`, { token, body: { dateOfBirth: '1986-07-21', homeZip: '60614' } });
    expect(updated.status).toBe(200);

    const mvr = await t.request('POST', `${USERS}/${userId}/sourceb-mvr`, { token, body: JSON.stringify(sourceBFull()) });
    expect(mvr.status).toBe(201);

    const scored = await t.request('GET', `${USERS}/${userId}/prequal-coverage-score`, { token });
    expect(scored.status).toBe(200);
    expect(scored.body).toMatchObject({ userId, mvrId: mvr.body.mvrId, mvrSource: 'sourceb', modelVersion: expect.stringMatching(/^prequal-/) });
    expect(scored.body.score).toBeGreaterThanOrEqual(0);
    expect(scored.body.score).toBeLessThanOrEqual(900);
    expect(scored.body.reasonCodes.length).toBeGreaterThan(0);
    expect(scored.body.reasonCodes.length).toBeLessThanOrEqual(4);
    expect(scored.body.reasons[0]).toEqual({ code: scored.body.reasonCodes[0], description: expect.any(String) });

    const enrolled = await t.request('PUT', `${USERS}/${userId}/enrollment`, { token, body: { enrollmentStatus: 'accepted' } });
    expect(enrolled.status).toBe(200);
    const user = await t.request('GET', `${USERS}/${userId}`, { token });
    expect(user.body).toMatchObject({ userId, dateOfBirth: '1986-07-21', homeZip: '60614', enrollmentStatus: 'accepted' });
    expect((await t.request('GET', `${USERS}/${userId}/prequal-coverage-score`, { token })).body).toEqual(scored.body);
  });

  it('runs end to end through GraphQL', async () => {
    const created = await t.graphql('mutation { createUser { userId enrollmentStatus } }');
    const userId = created.data.createUser.userId as string;
    const missing = await t.graphql('query($id: ID!) { prequalCoverageScore(userId: $id) { ... on MissingUserData { missingFields } } }', { id: userId });
    expect(missing.data.prequalCoverageScore.missingFields).toEqual(['dateOfBirth', 'homeZip', 'mvr']);
    await t.graphql('mutation($id: ID!) { updateUser(userId: $id, input: { dateOfBirth: "1970-01-31", homeZip: "94105" }) { userId } }', { id: userId });
    const mvr = await t.graphql('mutation($id: ID!, $t: String) { createMvr(userId: $id, source: SOURCE_A, reportJson: $t) { id } }', { id: userId, t: JSON.stringify(sourceAFull()) });
    expect(mvr.errors).toBeUndefined();
    const query = `query($id: ID!) { prequalCoverageScore(userId: $id) { __typename ... on PrequalCoverageScore {
      userId score modelVersion mvrRecordId asOf relativity reasons { code description } mvrRecord { id source summary { license { status } } } } } }`;
    const scored = await t.graphql(query, { id: userId });
    expect(scored.errors).toBeUndefined();
    const s = scored.data.prequalCoverageScore;
    expect(s).toMatchObject({ __typename: 'PrequalCoverageScore', userId, mvrRecordId: mvr.data.createMvr.id, mvrRecord: { id: mvr.data.createMvr.id, source: 'SOURCE_A', summary: { license: { status: 'VALID' } } } });
    expect(s.asOf).toBe(new Date().toISOString().slice(0, 10));
    expect(s.reasons.length).toBeLessThanOrEqual(4);
    const enrolled = await t.graphql('mutation($id: ID!) { enrollUser(userId: $id, status: ACCEPTED) { enrollmentStatus prequalCoverageScore { ... on PrequalCoverageScore { score } } } }', { id: userId });
    expect(enrolled.data.enrollUser).toEqual({ enrollmentStatus: 'ACCEPTED', prequalCoverageScore: { score: s.score } });
    const user = await t.graphql('query($id: ID!) { user(userId: $id) { userId dateOfBirth homeZip enrollmentStatus mvrRecords { id } } }', { id: userId });
    expect(user.data.user).toEqual({ userId, dateOfBirth: '1970-01-31', homeZip: '94105', enrollmentStatus: 'ACCEPTED', mvrRecords: [{ id: mvr.data.createMvr.id }] });
  });
});
