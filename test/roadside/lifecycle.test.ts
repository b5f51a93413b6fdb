import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack } from '../support/shared-stack.ts';
import type { TestStack } from '../support/stack.ts';
import { dispatch, provision, roadsideToken, RS, session, status } from './helpers.ts';

let t: TestStack;
let token: string;
let sessionId: string;

beforeAll(async () => {
  t = await sharedTestStack({ subgraphs: ['roadside'] });
  token = (await roadsideToken(t)).body.access_token;
  sessionId = await session(t, token, [], true);
});
afterAll(async () => { await t?.close(); });

const ORDER = ['BOOKED', 'EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED'];

/** A pay-per-use battery rescue moved to `target` along the legal path. */
async function rescueAt(target: string) {
  const created = await dispatch(t, token, sessionId);
  expect(created.status).toBe(201);
  const reqId = created.body.requestId as string;
  for (const step of ORDER.slice(1, ORDER.indexOf(target) + 1)) {
    const res = await status(t, token, reqId, step);
    expect(res.status, step).toBe(200);
  }
  return reqId;
}

const cancel = (reqId: string, body: Record<string, unknown> = {}) =>
  t.request('POST', `${RS}/rescue/reqId/${reqId}/cancel`, { token, body: { sessionId, ...body } });

const current = async (reqId: string) => (await t.request('GET', `${RS}/rescue/reqId/${reqId}`, { token })).body.serviceRequest;

describe('status lifecycle', () => {
  it('refuses every illegal transition with 409 and leaves the rescue unchanged', async () => {
    const all = [...ORDER];
    for (const from of ORDER) {
      const reqId = await rescueAt(from);
      const fromIndex = ORDER.indexOf(from);
      for (const to of all) {
        const legal = ORDER.indexOf(to) === fromIndex + 1 || (to === from && (from === 'EN-ROUTE' || from === 'APPROACHING'));
        if (legal) continue;
        const res = await status(t, token, reqId, to);
        expect(res.status, `${from} -> ${to}`).toBe(409);
        expect(res.body).toMatchObject({ code: 'CONFLICT', field: 'status' });
      }
      const after = await current(reqId);
      expect(after.status).toBe(from);
      expect(after.statusHistory).toHaveLength(fromIndex + 1);
    }
  });

  it('refuses any update of a cancelled rescue', async () => {
    const reqId = await rescueAt('BOOKED');
    expect((await cancel(reqId)).status).toBe(200);
    for (const to of ORDER) expect((await status(t, token, reqId, to)).status, to).toBe(409);
    expect((await cancel(reqId)).status).toBe(409);
  });

  it('sends CANCELLED through cancel only, and validates the update body', async () => {
    const reqId = await rescueAt('BOOKED');
    expect((await status(t, token, reqId, 'CANCELLED')).status).toBe(400);
    expect((await status(t, token, reqId, 'LOST')).status).toBe(400);
    expect((await status(t, token, reqId, 'EN-ROUTE', { latitude: 41.9 })).status).toBe(400);
    expect((await status(t, token, reqId, 'EN-ROUTE', { latitude: 95, longitude: 0 })).status).toBe(400);
    expect((await status(t, token, reqId, 'EN-ROUTE', { updatedETA: -1 })).status).toBe(400);
    expect((await status(t, token, reqId, 'EN-ROUTE', { updatedETA: 'soon' })).status).toBe(400);
    expect((await status(t, token, reqId, 'EN-ROUTE', { sessionId: 'another-session' })).status).toBe(404);
    expect((await status(t, token, 'no-such-rescue', 'EN-ROUTE')).status).toBe(404);
    expect((await t.request('POST', `${RS}/rescue/statusUpdate`, { token, body: { status: 'EN-ROUTE' } })).status).toBe(400);
    expect((await current(reqId)).status).toBe('BOOKED');
  });

  it('lets only one of two concurrent updates win', async () => {
    const reqId = await rescueAt('APPROACHING');
    const results = await Promise.all([status(t, token, reqId, 'ARRIVED_ONSITE'), status(t, token, reqId, 'ARRIVED_ONSITE')]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    const after = await current(reqId);
    expect(after.statusHistory.filter((e: { status: string }) => e.status === 'ARRIVED_ONSITE')).toHaveLength(1);

    const other = await rescueAt('BOOKED');
    const cancels = await Promise.all([cancel(other), cancel(other)]);
    expect(cancels.map((r) => r.status).sort()).toEqual([200, 409]);
    const final = await current(other);
    expect(final.statusHistory.filter((e: { status: string }) => e.status === 'CANCELLED')).toHaveLength(1);
  });
});

describe('cancel rules', () => {
  it('cancels a BOOKED or EN-ROUTE rescue while the ETA is over 15 minutes, with the documented body', async () => {
    const booked = await rescueAt('BOOKED');
    const res = await cancel(booked, { reason: 'Car started' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'OK', message: 'Rescue request cancelled' });
    const after = await current(booked);
    expect(after).toMatchObject({ status: 'CANCELLED', cancelReason: 'Car started', eta: null });
    expect(after.statusHistory.at(-1)).toMatchObject({ status: 'CANCELLED', note: 'Car started' });

    const enRoute = await rescueAt('BOOKED');
    expect((await status(t, token, enRoute, 'EN-ROUTE', { updatedETA: 16 })).status).toBe(200);
    expect((await cancel(enRoute)).status).toBe(200);
  });

  it('refuses to cancel while the ETA is 15 minutes or less', async () => {
    const reqId = await rescueAt('BOOKED');
    expect((await status(t, token, reqId, 'EN-ROUTE', { updatedETA: 15 })).status).toBe(200);
    const res = await cancel(reqId);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/15 minutes/);
    expect((await current(reqId)).status).toBe('EN-ROUTE');
    // The provider reports a delay: the rescue can be cancelled again.
    expect((await status(t, token, reqId, 'EN-ROUTE', { updatedETA: 30 })).status).toBe(200);
    expect((await cancel(reqId)).status).toBe(200);
  });

  it('refuses to cancel from APPROACHING on, whatever the ETA', async () => {
    for (const from of ['APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED']) {
      const reqId = await rescueAt(from);
      if (from === 'APPROACHING') expect((await status(t, token, reqId, 'APPROACHING', { updatedETA: 60 })).status).toBe(200);
      const res = await cancel(reqId);
      expect(res.status, from).toBe(409);
      expect((await current(reqId)).status).toBe(from);
    }
  });

  it('gives the claim back on cancel, and refuses a covered rescue once the claims are used', async () => {
    const member = await provision(t, token, { productType: 'BASIC', numberOfEvents: '' });
    const memberSession = await session(t, token, [{ key: 'memberId', value: member.memberId }]);
    const benefits = async () => (await t.request('GET', `${RS}/rescue/benefits?sessionId=${memberSession}`, { token })).body;
    // BASIC allows one tow.
    const first = await dispatch(t, token, memberSession, 'tow', { towLocationId: 'TL-CHI-01' });
    expect(first.status).toBe(201);
    expect(first.body.serviceRequest.cost.covered).toBe(true);
    expect((await benefits()).usageCount).toBe(1);
    const second = await dispatch(t, token, memberSession, 'tow', { towLocationId: 'TL-CHI-01' });
    expect(second.status).toBe(409);
    expect(second.body.detail).toMatch(/no tow claims are left/);

    expect((await cancel(first.body.requestId, { sessionId: memberSession })).status).toBe(200);
    const back = await benefits();
    expect(back.usageCount).toBe(0);
    expect(back.services.find((s: { type: string }) => s.type === 'Tow').claimCount).toBe(0);
    expect((await dispatch(t, token, memberSession, 'tow', { towLocationId: 'TL-CHI-01' })).status).toBe(201);
  });

  it('never spends more claims than the plan allows, even under concurrent dispatches', async () => {
    const member = await provision(t, token, { productType: 'BASIC', numberOfEvents: '' });
    const s = await session(t, token, [{ key: 'memberId', value: member.memberId }]);
    // BASIC allows one tow: of four concurrent tow requests exactly one is covered, the others are refused.
    const results = await Promise.all(Array.from({ length: 4 }, () => dispatch(t, token, s, 'tow', { towLocationId: 'TL-CHI-04' })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    const b = (await t.request('GET', `${RS}/rescue/benefits?sessionId=${s}`, { token })).body;
    expect(b.services.find((x: { type: string }) => x.type === 'Tow').claimCount).toBe(1);
  });

  it('takes no claim from an expired membership and refuses a member session without one', async () => {
    const member = await provision(t, token, { effectiveEndDate: '2020-01-31' });
    const s = await session(t, token, [{ key: 'vin', value: member.vin }]);
    const b = await t.request('GET', `${RS}/rescue/benefits?sessionId=${s}`, { token });
    expect(b.body).toMatchObject({ status: 'Inactive', membershipExpDate: '2020-01-31' });
    const res = await dispatch(t, token, s);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/not active/);
    // The same member on a pay-per-use session pays the whole price.
    const ppu = await session(t, token, [{ key: 'vin', value: member.vin }], true);
    const paid = await dispatch(t, token, ppu, 'battery', { batteryService: 'replace' });
    expect(paid.status).toBe(201);
    expect(paid.body.serviceRequest.cost).toMatchObject({ covered: false, totalCost: 230, customerPays: 230, payPerUse: true });
  });
});
