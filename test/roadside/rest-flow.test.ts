import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenApiContract } from '../support/openapi.ts';
import { buildOpenApi } from '../../gateway/rest/openapi.ts';
import { restRoutes } from '../../gateway/rest/index.ts';
import { sharedTestStack } from '../support/shared-stack.ts';
import type { TestStack } from '../support/stack.ts';
import { CHICAGO, dispatch, provision, roadsideToken, RS, session, status } from './helpers.ts';

let t: TestStack;
let token: string;

beforeAll(async () => {
  t = await sharedTestStack({ subgraphs: ['roadside'] });
  const res = await roadsideToken(t);
  token = res.body.access_token;
});
afterAll(async () => { await t?.close(); });

describe('a whole rescue through REST', () => {
  it('token, session, benefits, cost, dispatch, status updates, feedback, files', async () => {
    const tok = await roadsideToken(t);
    expect(tok.status).toBe(200);
    expect(tok.body).toMatchObject({ token_type: 'Bearer', expires_in: '3600', scope: 'roadside', client_id: t.client.id, status: 'approved' });
    expect(tok.body.issued_at).toMatch(/^\d{13}$/);

    const member = await provision(t, token);
    expect(member.body).toMatchObject({ partnerCode: 'ACME', productType: 'PLUS', make: 'honda', year: 2021, milesPerTow: 10, numberOfEvents: 4, partnerPay: false, serviceWeight: 'LIGHT', status: 'Active' });

    const sessionId = await session(t, token, [{ key: 'vin', value: member.vin }]);
    const benefits = await t.request('GET', `${RS}/rescue/benefits?appId=test-app&sessionId=${sessionId}`, { token });
    expect(benefits.status).toBe(200);
    expect(benefits.body).toMatchObject({ status: 'Active', maxClaimCount: 4, usageCount: 0, memberId: member.memberId, policyNumber: member.memberId, partnerCode: 'ACME', membershipExpDate: '2030-12-31' });
    const tow = benefits.body.services.find((s: { type: string }) => s.type === 'Tow');
    expect(tow).toMatchObject({ claimCount: 0, maxClaimCount: 2 });
    expect(benefits.body.services.find((s: { type: string }) => s.type === 'Gas')).toMatchObject({ fuelQty: 3, fuelQtyUnit: 'gallons' });

    // West Loop Honda is ~1.2 miles away: 1.56 road miles, within the member's 10 covered miles.
    const near = await t.request('POST', `${RS}/rescue/costs`, { token, body: { sessionId, service: 'tow', disablementLocation: CHICAGO, towLocationId: 'TL-CHI-03' } });
    expect(near.status).toBe(200);
    expect(near.body).toMatchObject({ service: 'TOW', covered: true, serviceFee: 95, billableMiles: 0, customerPays: 0, currency: 'USD' });
    // Evanston is ~11.7 miles away: past the 10 covered miles the customer pays $4.50 a mile.
    const far = await t.request('POST', `${RS}/rescue/costs`, { token, body: { sessionId, service: 'tow', disablementLocation: CHICAGO, destination: { latitude: 42.0451, longitude: -87.6877 } } });
    expect(far.status).toBe(200);
    expect(far.body.coveredMiles).toBe(10);
    expect(far.body.billableMiles).toBeGreaterThan(5);
    expect(far.body.customerPays).toBeCloseTo(far.body.billableMiles * 4.5, 1);

    const created = await dispatch(t, token, sessionId, 'tow', { towLocationId: 'TL-CHI-03' });
    expect(created.status).toBe(201);
    const reqId = created.body.requestId;
    expect(created.body.status).toBe('BOOKED');
    const sr = created.body.serviceRequest;
    expect(sr).toMatchObject({
      serviceType: 'tow', consumer: { firstName: 'Dana', lastName: 'Reyes', name: 'Dana Reyes' },
      vehicle: { make: 'Honda', year: 2021, color: 'Blue', vin: member.vin }, destinationAddress: { towLocationId: 'TL-CHI-03', city: 'Chicago' },
      provider: { providerId: 'CHI-01' }, cost: { covered: true, customerPays: 0 },
    });
    expect(sr.eta).toBeGreaterThan(15);
    expect(sr.driver.name).toMatch(/\w/);

    const used = await t.request('GET', `${RS}/rescue/benefits?sessionId=${sessionId}`, { token });
    expect(used.body.usageCount).toBe(1);
    expect(used.body.services.find((s: { type: string }) => s.type === 'Tow').claimCount).toBe(1);

    const providers = await t.request('GET', `${RS}/rescue/reqId/${reqId}/providers?sessionId=${sessionId}`, { token });
    expect(providers.status).toBe(200);
    expect(providers.body.providers[0]).toMatchObject({ providerId: 'CHI-01', assigned: true });
    expect(providers.body.providers.map((p: { distanceMiles: number }) => p.distanceMiles)).toEqual([...providers.body.providers.map((p: { distanceMiles: number }) => p.distanceMiles)].sort((a, b) => a - b));

    const eta = await t.request('GET', `${RS}/rescue/eta?reqId=${reqId}&sessionId=${sessionId}`, { token });
    expect(eta.status).toBe(200);
    expect(eta.body).toMatchObject({ requestId: reqId, status: 'BOOKED' });
    expect(eta.body.eta).toBeGreaterThan(15);

    const steps: [string, Record<string, unknown>][] = [
      ['EN-ROUTE', { latitude: 41.884, longitude: -87.639, updatedETA: 12 }],
      ['en-route', { latitude: 41.882, longitude: -87.637 }],
      ['APPROACHING', { updatedETA: 2 }],
      ['ARRIVED_ONSITE', {}],
      ['COMPLETED', {}],
    ];
    for (const [value, extra] of steps) {
      const res = await status(t, token, reqId, value, { sessionId, ...extra });
      expect(res.status, value).toBe(200);
      expect(res.body.status).toBe('OK');
      expect(res.body.requestStatus).toBe(value.toUpperCase());
    }
    const done = await t.request('GET', `${RS}/rescue/reqId/${reqId}?sessionId=${sessionId}`, { token });
    expect(done.status).toBe(200);
    expect(done.body.serviceRequest.status).toBe('COMPLETED');
    expect(done.body.serviceRequest.eta).toBeNull();
    const history = done.body.serviceRequest.statusHistory;
    expect(history.map((e: { status: string }) => e.status)).toEqual(['BOOKED', 'EN-ROUTE', 'EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED']);
    expect(history[1]).toMatchObject({ position: { latitude: 41.884, longitude: -87.639 }, etaMinutes: 12 });
    expect(history[2].etaMinutes).toBeGreaterThan(0);
    expect(history[4].position).toMatchObject({ latitude: CHICAGO.latitude, longitude: CHICAGO.longitude });
    for (const e of history) expect(Date.parse(e.at)).not.toBeNaN();

    const feedback = await t.request('POST', `${RS}/rescue/feedback`, { token, body: { requestId: reqId, sessionId, rating: 5, comment: 'Quick and friendly' } });
    expect(feedback.status).toBe(201);
    expect(feedback.body).toMatchObject({ status: 'OK', requestId: reqId, rating: 5, comment: 'Quick and friendly' });
    const again = await t.request('POST', `${RS}/rescue/feedback`, { token, body: { requestId: reqId, rating: 4 } });
    expect(again.status).toBe(409);

    // A PDF with every byte value, uploaded as base64 JSON, comes back byte for byte.
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from(Array.from({ length: 256 }, (_, i) => i))]);
    const up = await t.request('POST', `${RS}/provider/fileservice/upload`, {
      token, body: { requestId: reqId, fileType: 'invoice', fileName: 'invoice 42.pdf', contentType: 'application/pdf', content: pdf.toString('base64') },
    });
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({ reqId, memberId: member.memberId, fileType: 'INVOICE', size: pdf.length, contentType: 'application/pdf' });
    const raw = await fetch(`${t.url}${RS}/provider/fileservice/retrieve/${up.body.contentId}`, { headers: { authorization: `Bearer ${token}` } });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('application/pdf');
    expect(Buffer.from(await raw.arrayBuffer()).equals(pdf)).toBe(true);
    // The document describes the binary answer's real media type (not application/json).
    const contract = await OpenApiContract.of(buildOpenApi(restRoutes));
    const retrieve = `${RS}/provider/fileservice/retrieve/${up.body.contentId}`;
    expect(contract.check('GET', retrieve, { status: 200, headers: raw.headers, body: '' })).toEqual([]);
    expect(contract.check('GET', retrieve, { status: 200, headers: new Headers({ 'content-type': 'application/json' }), body: {} })[0]).toMatch(/content type application\/json not declared/);

    // Multipart upload of a PNG.
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0xff, 0x00, 0x7f]);
    const form = new FormData();
    form.append('requestId', reqId);
    form.append('fileType', 'PHOTO');
    form.append('file', new Blob([png], { type: 'image/png' }), 'damage.png');
    const mp = await fetch(`${t.url}${RS}/provider/fileservice/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
    const mpBody = await mp.json() as { contentId: string; fileName: string; contentType: string; size: number };
    expect(mp.status).toBe(201);
    expect(mpBody).toMatchObject({ fileName: 'damage.png', contentType: 'image/png', size: png.length });
    const rawPng = await fetch(`${t.url}${RS}/provider/fileservice/retrieve/${mpBody.contentId}`, { headers: { authorization: `Bearer ${token}` } });
    expect(rawPng.headers.get('content-type')).toBe('image/png');
    expect(contract.check('GET', `${RS}/provider/fileservice/retrieve/${mpBody.contentId}`, { status: rawPng.status, headers: rawPng.headers, body: '' })).toEqual([]);
    expect(Buffer.from(await rawPng.arrayBuffer()).equals(png)).toBe(true);

    const search = await t.request('POST', `${RS}/provider/fileservice/search`, { token, body: { requestId: reqId } });
    expect(search.status).toBe(200);
    expect(search.body.files.map((f: { contentId: string }) => f.contentId).sort()).toEqual([up.body.contentId, mpBody.contentId].sort());
    const byType = await t.request('POST', `${RS}/provider/fileservice/search`, { token, body: { memberId: member.memberId, fileType: 'photo', from: new Date(Date.now() - 86400000).toISOString().slice(0, 10) } });
    expect(byType.body.files.map((f: { contentId: string }) => f.contentId)).toEqual([mpBody.contentId]);
    const future = await t.request('POST', `${RS}/provider/fileservice/search`, { token, body: { requestId: reqId, from: '2999-01-01' } });
    expect(future.body.files).toEqual([]);
  });
});
