import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Booking, Vehicle } from '../../subgraphs/booking/entities.ts';
import { sharedTestStack } from '../support/shared-stack.ts';
import type { TestStack } from '../support/stack.ts';

const P = '/shared-mobility-insights/v2';
let t: TestStack;

beforeAll(async () => { t = await sharedTestStack({ subgraphs: ['booking'] }); });
afterAll(async () => { await t?.close(); });

async function rows<T extends object>(entity: new () => T, where: Record<string, unknown>): Promise<T[]> {
  const db = t.stack.subgraphs.find((s) => s.name === 'booking')!.db;
  return db.orm.em.fork().find(entity as never, where as never, { filters: false }) as Promise<T[]>;
}

const post = (path: string, body?: unknown) => t.request('POST', `${P}${path}`, { token: t.token, body });

describe('races decided by the database', () => {
  it('50 concurrent starts on one VIN: exactly one 201 and 49 clear 409s', async () => {
    const vin = 'RACE0000000000001';
    expect((await post('/vehicles', { VIN: vin, deviceID: 'race-device' })).status).toBe(201);
    // Every request asks for an open-ended period starting within the same minute, so all overlap.
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      post('/bookings', { VIN: vin, userID: `racer-${i}`, startTimestamp: 1_800_000_000 + i })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    for (const res of results.filter((r) => r.status === 409)) {
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
      expect(res.body).toMatchObject({ code: 'CONFLICT', reason: 'BOOKING_OVERLAP' });
      expect(res.body.detail).toMatch(/already has a booking whose period overlaps/);
    }
    const stored = await rows(Booking, { vin });
    expect(stored).toHaveLength(1);
    expect(stored[0].bookingId).toBe(results.find((r) => r.status === 201)!.body.bookingID);
  });

  it('20 concurrent starts with distinct, non-overlapping periods all succeed', async () => {
    const vin = 'RACE0000000000002';
    await post('/vehicles', { VIN: vin, deviceID: 'race-device-2' });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
      post('/bookings', { VIN: vin, startTimestamp: 1_000 * i, estimatedEndTimestamp: 1_000 * i + 1_000 })));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(await rows(Booking, { vin })).toHaveLength(20);
  });

  it('10 concurrent ends of one booking: exactly one succeeds, the rest are 409', async () => {
    const vin = 'RACE0000000000003';
    await post('/vehicles', { VIN: vin, deviceID: 'race-device-3' });
    const started = await post('/bookings', { VIN: vin, bookingID: 'race-end', startTimestamp: 1_000 });
    expect(started.status).toBe(201);
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      t.request('PUT', `${P}/bookings/race-end`, { token: t.token, body: { actualEndTimestamp: 2_000 + i } })));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(9);
    const [row] = await rows(Booking, { bookingId: 'race-end' });
    expect(row.actualEndTimestamp).toBe(ok[0].body.actualEndTimestamp);
  });

  it('pairing one device with 10 vehicles at once leaves it paired with exactly one', async () => {
    const vins = Array.from({ length: 10 }, (_, i) => `RACEPAIR${String(i).padStart(9, '0')}`);
    for (const vin of vins) expect((await post('/vehicles', { VIN: vin })).status).toBe(201);
    const results = await Promise.all(vins.map((vin) => post(`/vehicles/${vin}/devices/contested-imei`)));
    for (const res of results) expect([200, 409]).toContain(res.status);
    expect(results.some((r) => r.status === 200)).toBe(true);
    const holders = await rows(Vehicle, { deviceId: 'contested-imei' });
    expect(holders).toHaveLength(1);
  });
});
