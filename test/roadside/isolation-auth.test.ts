import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roadsideRoutes } from '../../subgraphs/roadside/rest.ts';
import { sharedTestStack } from '../support/shared-stack.ts';
import type { TestStack } from '../support/stack.ts';
import { dispatch, provision, roadsideToken, RS, session } from './helpers.ts';

let t: TestStack;
let tokenA: string;
let tokenB: string;
let sessionA: string;
let reqA: string;
let fileA: string;
let memberA: Awaited<ReturnType<typeof provision>>;

beforeAll(async () => {
  t = await sharedTestStack({ subgraphs: ['roadside'] });
  tokenA = (await roadsideToken(t)).body.access_token;
  const b = await t.clientFor('org-b', ['roadside']);
  tokenB = (await roadsideToken(t, b.clientId, b.clientSecret)).body.access_token;
  memberA = await provision(t, tokenA);
  sessionA = await session(t, tokenA, [{ key: 'vin', value: memberA.vin }]);
  reqA = (await dispatch(t, tokenA, sessionA)).body.requestId;
  const up = await t.request('POST', `${RS}/provider/fileservice/upload`, {
    token: tokenA, body: { requestId: reqA, fileType: 'PHOTO', fileName: 'a.jpg', contentType: 'image/jpeg', content: Buffer.from('jpeg').toString('base64') },
  });
  fileA = up.body.contentId;
});
afterAll(async () => { await t?.close(); });

/** A concrete URL for each REST row. */
const concrete = (path: string) => path
  .replace(':reqId', reqA).replace(':contentid', fileA).replace(':make', 'Honda')
  .replace(':memberId', memberA.memberId).replace(':assetIntegrationId', memberA.assetIntegrationId).replace(':partnerCd', memberA.partnerCode);

describe('roadside token endpoint', () => {
  it('issues roadside tokens to Basic-authenticated clients and refuses the others', async () => {
    const ok = await roadsideToken(t);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('cache-control')).toBe('no-store');
    const wrong = await roadsideToken(t, 'test-client', 'wrong-secret');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    const noGrant = await t.request('POST', `${RS}/oauth/accesstoken`, { headers: { authorization: `Basic ${Buffer.from('test-client:test-secret-0123456789abcdef').toString('base64')}` } });
    expect(noGrant.status).toBe(400);
    expect(noGrant.body.error).toBe('invalid_request');
    const otherGrant = await t.request('POST', `${RS}/oauth/accesstoken?grant_type=password`, { headers: { authorization: `Basic ${Buffer.from('test-client:test-secret-0123456789abcdef').toString('base64')}` } });
    expect(otherGrant.body.error).toBe('unsupported_grant_type');
    const b2b = await t.clientFor('org-c', ['b2b']);
    const refused = await roadsideToken(t, b2b.clientId, b2b.clientSecret);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('invalid_scope');
  });
});

describe('auth on every roadside path', () => {
  it('has the 24 documented paths besides the token path', () => {
    expect(roadsideRoutes).toHaveLength(24);
    expect(new Set(roadsideRoutes.map((r) => `${r.method} ${r.path}`)).size).toBe(24);
    expect(roadsideRoutes.every((r) => r.scope === 'roadside' && r.path.startsWith(RS))).toBe(true);
  });

  it('documents every roadside path in the OpenAPI document', async () => {
    const doc = await t.request('GET', '/openapi.json');
    for (const route of roadsideRoutes) {
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      expect(doc.body.paths[path]?.[route.method.toLowerCase()]?.operationId, path).toBe(route.operationId);
    }
  });

  it('answers 401 without a token and 403 to a b2b-only token', async () => {
    const b2b = await t.clientFor('org-a', ['b2b']);
    for (const route of roadsideRoutes) {
      const url = concrete(route.path);
      const body = route.method === 'GET' ? undefined : {};
      const none = await t.request(route.method, url, { body });
      expect(none.status, `${route.method} ${url}`).toBe(401);
      const forbidden = await t.request(route.method, url, { token: b2b.token, body });
      expect(forbidden.status, `${route.method} ${url}`).toBe(403);
      expect(forbidden.body.code).toBe('FORBIDDEN');
    }
    const gql = await t.graphql('{ vehicleMakes }', {}, b2b.token);
    expect(gql.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });
});

describe('organisation isolation', () => {
  it("hides one organisation's rescue, session, members and files from another", async () => {
    const asB = (method: string, path: string, body?: unknown) => t.request(method, `${RS}${path}`, { token: tokenB, body });
    expect((await asB('GET', `/rescue/reqId/${reqA}`)).status).toBe(404);
    expect((await asB('GET', `/rescue/reqId/${reqA}/providers`)).status).toBe(404);
    expect((await asB('GET', `/rescue/eta?reqId=${reqA}`)).status).toBe(404);
    expect((await asB('POST', `/rescue/reqId/${reqA}/cancel`, {})).status).toBe(404);
    expect((await asB('POST', '/rescue/statusUpdate', { requestId: reqA, status: 'EN-ROUTE' })).status).toBe(404);
    expect((await asB('POST', '/rescue/feedback', { requestId: reqA, rating: 5 })).status).toBe(404);
    expect((await asB('GET', `/rescue/benefits?sessionId=${sessionA}`)).status).toBe(404);
    expect((await asB('POST', '/rescue/battery', { sessionId: sessionA, disablementLocation: { latitude: 41.88, longitude: -87.63 }, batteryService: 'JUMP' })).status).toBe(404);
    expect((await asB('POST', '/rescue/costs', { sessionId: sessionA, service: 'tire', disablementLocation: { latitude: 41.88, longitude: -87.63 } })).status).toBe(404);
    expect((await asB('GET', `/provider/fileservice/retrieve/${fileA}`)).status).toBe(404);
    expect((await asB('POST', '/provider/fileservice/search', { requestId: reqA })).body.files).toEqual([]);
    expect((await asB('POST', '/provider/fileservice/search', {})).body.files).toEqual([]);
    expect((await asB('POST', '/provider/fileservice/upload', { requestId: reqA, fileType: 'PHOTO', fileName: 'b.jpg', contentType: 'image/jpeg', content: 'AAAA' })).status).toBe(404);
    const path = `/provisioning/formpost/member/${memberA.memberId}/asset/${memberA.assetIntegrationId}/partner/${memberA.partnerCode}`;
    expect((await asB('GET', path)).status).toBe(404);
    expect((await asB('PUT', path, { city: 'Elsewhere' })).status).toBe(404);
    // B's session with A's member keys finds no member: benefits are empty.
    const sB = await session(t, tokenB, [{ key: 'vin', value: memberA.vin }, { key: 'memberId', value: memberA.memberId }]);
    const benefitsB = await asB('GET', `/rescue/benefits?sessionId=${sB}`);
    expect(benefitsB.body).toMatchObject({ status: 'Inactive', memberId: null, maxClaimCount: 0 });
    // The same ids may be provisioned in B independently.
    const same = await asB('POST', '/ars_provisioning_v1/formpost', { partnerCode: memberA.partnerCode, memberId: memberA.memberId, assetIntegrationId: memberA.assetIntegrationId, firstName: 'Other', lastName: 'Org' });
    expect(same.status).toBe(201);
    const gqlB = await t.graphql('query($r: ID!, $s: ID!, $c: ID!) { rescue(reqId: $r) { reqId } rescueSession(sessionId: $s) { sessionId } providerFile(contentId: $c) { contentId } }', { r: reqA, s: sessionA, c: fileA }, tokenB);
    expect(gqlB.data).toEqual({ rescue: null, rescueSession: null, providerFile: null });
    // A still sees everything, unchanged.
    const a = await t.request('GET', `${RS}/rescue/reqId/${reqA}`, { token: tokenA });
    expect(a.body.serviceRequest.status).toBe('BOOKED');
    expect((await t.request('GET', `${RS}${path}`, { token: tokenA })).body.firstName).toBe('Dana');
  });

  it('shares reference data across organisations', async () => {
    const a = await t.request('GET', `${RS}/vehicle/makes`, { token: tokenA });
    const b = await t.request('GET', `${RS}/vehicle/makes`, { token: tokenB });
    expect(b.body).toEqual(a.body);
  });
});
