import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack } from '../support/shared-stack.ts';
import type { TestStack } from '../support/stack.ts';
import { CHICAGO, dispatch, OCEAN, provision, roadsideToken, RS, session } from './helpers.ts';

let t: TestStack;
let token: string;
let sessionId: string;
let reqId: string;
let member: Awaited<ReturnType<typeof provision>>;

beforeAll(async () => {
  t = await sharedTestStack({ subgraphs: ['roadside'] });
  token = (await roadsideToken(t)).body.access_token;
  member = await provision(t, token);
  sessionId = await session(t, token, [{ key: 'vin', value: member.vin }]);
  reqId = (await dispatch(t, token, sessionId)).body.requestId;
});
afterAll(async () => { await t?.close(); });

const bad = async (method: string, path: string, body?: unknown, expected = 400) => {
  const res = await t.request(method, `${RS}${path}`, { token, body });
  expect(res.status, `${method} ${path} ${JSON.stringify(body)} -> ${JSON.stringify(res.body)}`).toBe(expected);
  expect(res.headers.get('content-type')).toMatch(/problem\+json/);
  return res;
};

describe('validation: 400 (never 500) on every path', () => {
  it('session', async () => {
    await bad('POST', '/rescue/session', {});
    await bad('POST', '/rescue/session', { appId: '' });
    await bad('POST', '/rescue/session', { appId: 'a', benefits: 'vin' });
    await bad('POST', '/rescue/session', { appId: 'a', benefits: [{ key: 'vin' }] });
    await bad('POST', '/rescue/session', { appId: 'a', benefits: [{ key: 'vin', value: 'short' }] });
    await bad('POST', '/rescue/session', { appId: 'a', otherInfo: [{ key: 'ppuflag', value: 'maybe' }] });
    await bad('POST', '/rescue/session', '[1]');
    await bad('POST', '/rescue/session', '{"appId":');
  });

  it('benefits', async () => {
    await bad('GET', '/rescue/benefits');
    await bad('GET', `/rescue/benefits?sessionId=${sessionId}&appId=other-app`);
    await bad('GET', '/rescue/benefits?sessionId=unknown', undefined, 404);
  });

  it('provisioning', async () => {
    const base = { partnerCode: 'ACME', memberId: 'V-1', assetIntegrationId: 'V-A', firstName: 'A', lastName: 'B' };
    await bad('POST', '/ars_provisioning_v1/formpost', {});
    await bad('POST', '/ars_provisioning_v1/formpost', { ...base, firstName: '' });
    for (const [field, value] of [['vin', 'ABC'], ['year', 'nineteen'], ['year', '1850'], ['zip', '123'], ['state', 'Illinois'], ['emailAddress', 'no-at'],
      ['effectiveEndDate', '2030-02-30'], ['milesPerTow', '-5'], ['numberOfEvents', '2.5'], ['partnerPay', 'perhaps'], ['serviceWeight', 'huge'], ['productType', 'GOLD']]) {
      const res = await bad('POST', '/ars_provisioning_v1/formpost', { ...base, [field]: value });
      expect(JSON.stringify(res.body)).toMatch(new RegExp(field));
    }
    const path = `/provisioning/formpost/member/${member.memberId}/asset/${member.assetIntegrationId}/partner/${member.partnerCode}`;
    await bad('PUT', path, { year: 'x' });
    await bad('PUT', path, { lastName: 'x'.repeat(200) });
    await bad('PUT', path, [1]);
    await bad('GET', `/provisioning/formpost/member/${member.memberId}/asset/nope/partner/${member.partnerCode}`, undefined, 404);
    await bad('PUT', `/provisioning/formpost/member/nope/asset/x/partner/${member.partnerCode}`, { year: 2020 }, 404);
    await bad('POST', '/ars_provisioning_v1/formpost', { ...member.body, vin: undefined, year: String(member.body.year), milesPerTow: '10', numberOfEvents: '4', partnerPay: 'N', status: undefined, createdAt: undefined, updatedAt: undefined }, 409);
  });

  it('provisioning GET and PUT round-trip', async () => {
    const path = `/provisioning/formpost/member/${member.memberId}/asset/${member.assetIntegrationId}/partner/${member.partnerCode}`;
    const put = await t.request('PUT', `${RS}${path}`, { token, form: { milesPerTow: '30', city: 'Evanston', model: 'Civic' } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ milesPerTow: 30, city: 'Evanston', model: 'Civic', firstName: 'Dana' });
    const get = await t.request('GET', `${RS}${path}`, { token });
    expect(get.body).toMatchObject({ milesPerTow: 30, city: 'Evanston', model: 'Civic' });
  });

  it('makes, models and availability', async () => {
    const makes = await t.request('GET', `${RS}/vehicle/makes`, { token });
    expect(makes.status).toBe(200);
    expect(makes.body.makes.length).toBeGreaterThan(30);
    const models = await t.request('GET', `${RS}/vehicle/makes/hOnDa/models`, { token });
    expect(models.body).toMatchObject({ make: 'Honda' });
    expect(models.body.models).toContain('Civic');
    const spaced = await t.request('GET', `${RS}/vehicle/makes/land%20rover/models`, { token });
    expect(spaced.body.models).toContain('Defender');
    const unknown = await bad('GET', '/vehicle/makes/Yugo/models', undefined, 404);
    expect(unknown.body.code).toBe('NOT_FOUND');

    await bad('GET', '/rescue/available');
    await bad('GET', '/rescue/available?latitude=abc&longitude=1');
    await bad('GET', '/rescue/available?latitude=91&longitude=1');
    await bad('GET', '/rescue/available?latitude=41&longitude=-87&service=teleport');
    const here = await t.request('GET', `${RS}/rescue/available?latitude=${CHICAGO.latitude}&longitude=${CHICAGO.longitude}&service=tow`, { token });
    expect(here.body).toMatchObject({ available: true, services: [{ service: 'tow', available: true }] });
    const ocean = await t.request('GET', `${RS}/rescue/available?latitude=${OCEAN.latitude}&longitude=${OCEAN.longitude}`, { token });
    expect(ocean.body.available).toBe(false);
    expect(ocean.body.services).toHaveLength(5);
  });

  it('rescue creation, per service', async () => {
    const at = CHICAGO;
    await bad('POST', '/rescue/tire', { sessionId, disablementLocation: at });
    await bad('POST', '/rescue/tire', { sessionId, disablementLocation: at, spareAvailable: false });
    await bad('POST', '/rescue/gas', { sessionId, disablementLocation: at });
    await bad('POST', '/rescue/gas', { sessionId, disablementLocation: at, fuelType: 'electric' });
    await bad('POST', '/rescue/lockout', { sessionId, disablementLocation: at });
    await bad('POST', '/rescue/lockout', { sessionId, disablementLocation: at, keysLocation: 'somewhere' });
    await bad('POST', '/rescue/battery', { sessionId, disablementLocation: at });
    await bad('POST', '/rescue/battery', { sessionId, disablementLocation: at, batteryService: 'charge' });
    await bad('POST', '/rescue/tow', { sessionId, disablementLocation: at });
    await bad('POST', '/rescue/tow', { sessionId, disablementLocation: at, destination: { latitude: 34.05, longitude: -118.24 } });
    await bad('POST', '/rescue/tow', { sessionId, disablementLocation: at, towLocationId: 'TL-NOPE' }, 404);
    await bad('POST', '/rescue/tire', { disablementLocation: at, spareAvailable: true });
    await bad('POST', '/rescue/tire', { sessionId, spareAvailable: true });
    await bad('POST', '/rescue/tire', { sessionId, disablementLocation: { latitude: 'north', longitude: 1 }, spareAvailable: true });
    await bad('POST', '/rescue/tire', { sessionId, disablementLocation: { latitude: 41, longitude: 200 }, spareAvailable: true });
    await bad('POST', '/rescue/tire', { sessionId, disablementLocation: { ...at, zip: 'abc' }, spareAvailable: true });
    await bad('POST', '/rescue/tire', { sessionId, disablementLocation: at, spareAvailable: true, vehicle: { make: 'Yugo' } });
    await bad('POST', '/rescue/tire', { sessionId, disablementLocation: at, spareAvailable: true, vehicle: { vin: '123' } });
    await bad('POST', '/rescue/tire', { sessionId, disablementLocation: at, spareAvailable: true, vehicle: 'car' });
    await bad('POST', '/rescue/tire', { sessionId: 'nope', disablementLocation: at, spareAvailable: true }, 404);
    // No provider covers the middle of the ocean.
    await bad('POST', '/rescue/tire', { sessionId, disablementLocation: OCEAN, spareAvailable: true }, 409);
    // A session that names no member and is not pay-per-use cannot book.
    const anonymous = await session(t, token, [{ key: 'memberId', value: 'nobody' }]);
    await bad('POST', '/rescue/tire', { sessionId: anonymous, disablementLocation: at, spareAvailable: true });
    // The OEM plan covers tows to dealers only.
    const oem = await provision(t, token, { productType: 'OEM' });
    const oemSession = await session(t, token, [{ key: 'vin', value: oem.vin }]);
    const shop = await bad('POST', '/rescue/tow', { sessionId: oemSession, disablementLocation: at, towLocationId: 'TL-CHI-01' });
    expect(shop.body.field).toBe('towLocationId');
    await bad('POST', '/rescue/tow', { sessionId: oemSession, disablementLocation: at, destination: { latitude: 41.9, longitude: -87.65 } });
    const dealer = await t.request('POST', `${RS}/rescue/tow`, { token, body: { sessionId: oemSession, disablementLocation: at, towLocationId: 'TL-CHI-03' } });
    expect(dealer.status).toBe(201);
    const lockout = await t.request('POST', `${RS}/rescue/lockout`, { token, body: { sessionId, disablementLocation: at, keysLocation: 'in-trunk' } });
    expect(lockout.status).toBe(201);
    expect(lockout.body.serviceRequest.details.keysLocation).toBe('IN_TRUNK');
  });

  it('costs and tow locations', async () => {
    await bad('POST', '/rescue/costs', {});
    await bad('POST', '/rescue/costs', { sessionId, disablementLocation: CHICAGO });
    await bad('POST', '/rescue/costs', { sessionId, service: 'fly', disablementLocation: CHICAGO });
    await bad('POST', '/rescue/costs', { sessionId, disablementLocation: CHICAGO, destination: { latitude: 100, longitude: 0 } });
    const tire = await t.request('POST', `${RS}/rescue/costs`, { token, body: { sessionId, service: 'changetire', disablementLocation: CHICAGO } });
    expect(tire.body).toMatchObject({ service: 'TIRE', totalCost: 75, towMiles: 0 });

    await bad('POST', '/rescue/tow/locations', {});
    await bad('POST', '/rescue/tow/locations', { latitude: 41.88, longitude: -87.63, radiusMiles: 0 });
    await bad('POST', '/rescue/tow/locations', { latitude: 41.88, longitude: -87.63, limit: 500 });
    await bad('POST', '/rescue/tow/locations', { latitude: 41.88, longitude: -87.63, type: 'junkyard' });
    const dealers = await t.request('POST', `${RS}/rescue/tow/locations`, { token, body: { latitude: 41.88, longitude: -87.63, radiusMiles: 30, type: 'dealer', make: 'honda' } });
    expect(dealers.status).toBe(200);
    expect(dealers.body.locations.map((l: { locationId: string }) => l.locationId)).toEqual(['TL-CHI-03']);
    const near = await t.request('POST', `${RS}/rescue/tow/locations`, { token, body: { location: { latitude: '41.88', longitude: '-87.63' }, radiusMiles: 50 } });
    const d = near.body.locations.map((l: { distanceMiles: number }) => l.distanceMiles);
    expect(d.length).toBeGreaterThan(3);
    expect(d).toEqual([...d].sort((a: number, b: number) => a - b));
  });

  it('lookups, cancel, feedback', async () => {
    await bad('GET', '/rescue/reqId/nope', undefined, 404);
    await bad('GET', `/rescue/reqId/${reqId}?sessionId=other`, undefined, 404);
    await bad('GET', '/rescue/reqId/nope/providers', undefined, 404);
    await bad('GET', '/rescue/eta');
    await bad('GET', '/rescue/eta?reqId=nope', undefined, 404);
    await bad('POST', '/rescue/reqId/nope/cancel', {}, 404);
    await bad('POST', `/rescue/reqId/${reqId}/cancel`, { reason: 'x'.repeat(501) });
    await bad('POST', `/rescue/reqId/${reqId}/cancel`, 'nonsense');
    await bad('POST', '/rescue/feedback', {});
    await bad('POST', '/rescue/feedback', { requestId: reqId, rating: 6 });
    await bad('POST', '/rescue/feedback', { requestId: reqId, rating: 0 });
    await bad('POST', '/rescue/feedback', { requestId: reqId, rating: 'great' });
    await bad('POST', '/rescue/feedback', { requestId: reqId, rating: 3.5 });
    await bad('POST', '/rescue/feedback', { requestId: reqId, rating: 5, comment: 'x'.repeat(2001) });
    // Not completed yet.
    await bad('POST', '/rescue/feedback', { requestId: reqId, rating: 5 }, 409);
  });

  it('files: 400, 404, 413, 415', async () => {
    const ok = { requestId: reqId, fileType: 'PHOTO', fileName: 'a.png', contentType: 'image/png', content: Buffer.from('png').toString('base64') };
    await bad('POST', '/provider/fileservice/upload', {});
    await bad('POST', '/provider/fileservice/upload', { ...ok, content: 'not base64!' });
    await bad('POST', '/provider/fileservice/upload', { ...ok, content: '' });
    await bad('POST', '/provider/fileservice/upload', { ...ok, fileType: 'SELFIE' });
    await bad('POST', '/provider/fileservice/upload', { ...ok, fileName: '../etc/passwd' });
    await bad('POST', '/provider/fileservice/upload', { ...ok, requestId: undefined });
    await bad('POST', '/provider/fileservice/upload', { ...ok, requestId: 'nope' }, 404);
    const type = await bad('POST', '/provider/fileservice/upload', { ...ok, contentType: 'application/x-msdownload' }, 415);
    expect(type.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    const big = await bad('POST', '/provider/fileservice/upload', { ...ok, content: Buffer.alloc(512 * 1024 + 1).toString('base64') }, 413);
    expect(big.body.code).toBe('PAYLOAD_TOO_LARGE');
    const huge = await bad('POST', '/provider/fileservice/upload', { ...ok, content: Buffer.alloc(2 * 1024 * 1024).toString('base64') }, 413);
    expect(huge.body.code).toBe('PAYLOAD_TOO_LARGE');

    const form = new FormData();
    form.append('requestId', reqId);
    form.append('fileType', 'PHOTO');
    form.append('file', new Blob([Buffer.alloc(512 * 1024 + 10)], { type: 'image/jpeg' }), 'big.jpg');
    const mp = await fetch(`${t.url}${RS}/provider/fileservice/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    expect(mp.status).toBe(413);
    const exe = new FormData();
    exe.append('memberId', member.memberId);
    exe.append('fileType', 'OTHER');
    exe.append('file', new Blob([Buffer.from('MZ')], { type: 'application/x-msdownload' }), 'x.exe');
    expect((await fetch(`${t.url}${RS}/provider/fileservice/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: exe })).status).toBe(415);

    await bad('POST', '/provider/fileservice/search', { from: 'yesterday' });
    await bad('POST', '/provider/fileservice/search', { from: '2026-02-01', to: '2026-01-01' });
    await bad('POST', '/provider/fileservice/search', { fileType: 'SELFIE' });
    await bad('POST', '/provider/fileservice/search', { limit: 0 });
    await bad('GET', '/provider/fileservice/retrieve/nope', undefined, 404);
  });
});
