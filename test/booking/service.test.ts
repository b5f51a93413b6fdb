import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { openDatabase, type Database } from '../../subgraphs/platform/db/orm.ts';
import { TENANT_FILTER } from '../../subgraphs/platform/db/tenant.ts';
import { AppError } from '../../subgraphs/platform/errors.ts';
import { booking } from '../../subgraphs/booking/index.ts';
import { Booking, Vehicle } from '../../subgraphs/booking/entities.ts';
import { checkPageSize, decodeCursor, encodeCursor } from '../../subgraphs/booking/paging.ts';
import { BookingService, normaliseVin } from '../../subgraphs/booking/service.ts';
import { testDatabase } from '../support/database.ts';

/** The domain rules of area A, on the real database but without HTTP or GraphQL. */
let db: Database;
let dataDir: string;
let dropDatabase: () => Promise<void>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'frg-booking-'));
  const database = await testDatabase();
  dropDatabase = database.drop;
  const config = loadConfig({ ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATA_DIR: dataDir, DATABASE_URL: undefined, ...database.env });
  db = await openDatabase(config, { name: booking.name, entities: booking.entities, migrationsPath: booking.migrationsPath });
});
afterAll(async () => {
  await db?.close();
  await dropDatabase?.();
  await rm(dataDir, { recursive: true, force: true });
});

/** A service as one request of `org` would see it. */
function serviceFor(org: string) {
  const em = db.orm.em.fork({ clear: true, useContext: false });
  em.setFilterParams(TENANT_FILTER, { orgId: org });
  return new BookingService(em);
}

/** Every row of the organisations, bypassing the tenant filter. */
const allRows = async <T extends object>(entity: new () => T, where: Record<string, unknown>) =>
  db.orm.em.fork().find(entity as never, where as never, { filters: false }) as Promise<T[]>;

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

let counter = 0;
const nextVin = () => `SVC${String(++counter).padStart(14, '0')}`;

describe('paging helpers', () => {
  it('round-trips cursors and refuses anything else', () => {
    const cursor = { start: 4_102_444_800, bookingId: 'ü/é "x"' };
    expect(decodeCursor(encodeCursor(cursor))).toEqual(cursor);
    expect(decodeCursor(null)).toBeNull();
    for (const bad of ['', 'not base64!', Buffer.from('{"a":1}').toString('base64url'), Buffer.from('[1]').toString('base64url'), Buffer.from('["1","x"]').toString('base64url')]) {
      expect(() => decodeCursor(bad), bad).toThrow(AppError);
    }
  });

  it('accepts page sizes 1 to 100 and defaults to 20', () => {
    expect(checkPageSize(undefined)).toBe(20);
    expect(checkPageSize(1)).toBe(1);
    expect(checkPageSize(100)).toBe(100);
    for (const bad of [0, -1, 101, 1.5]) expect(() => checkPageSize(bad)).toThrow(/1 to 100/);
  });

  it('normalises a VIN to upper case and refuses anything but 17 letters or digits', () => {
    expect(normaliseVin('1hgcm82633a004352')).toBe('1HGCM82633A004352');
    for (const bad of ['1HGCM82633A00435', '1HGCM82633A0043521', '1HGCM82633A00435-', '', 17]) expect(() => normaliseVin(bad)).toThrow(AppError);
  });
});

describe('BookingService', () => {
  it('stores the VIN upper-case and refuses a second vehicle with the same VIN', async () => {
    const vin = nextVin();
    const created = await serviceFor('org-a').createVehicle(vin.toLowerCase());
    expect(created.vin).toBe(vin);
    expect((await rejection(serviceFor('org-a').createVehicle(vin))).code).toBe('CONFLICT');
    expect(await allRows(Vehicle, { vin })).toHaveLength(1);
  });

  it('moves a device between vehicles in one step, so at most one vehicle holds it', async () => {
    const [a, b] = [nextVin(), nextVin()];
    const svc = serviceFor('org-a');
    await svc.createVehicle(a, 'dev-move');
    await serviceFor('org-a').createVehicle(b);
    const paired = await serviceFor('org-a').pairDevice(b, 'dev-move');
    expect(paired.deviceId).toBe('dev-move');
    const holders = await allRows(Vehicle, { deviceId: 'dev-move' });
    expect(holders.map((v) => v.vin)).toEqual([b]);
    expect((await serviceFor('org-a').getVehicle(a)).deviceId).toBeNull();
  });

  it('a failed start leaves the pairing as it was (one transaction)', async () => {
    const [a, b] = [nextVin(), nextVin()];
    await serviceFor('org-a').createVehicle(a, 'dev-keep');
    await serviceFor('org-a').createVehicle(b, 'dev-other');
    await serviceFor('org-a').startBooking({ vin: b, startTimestamp: 100 });
    // Overlaps the open booking of b, and would re-pair dev-keep from a to b: refused, nothing moves.
    const error = await rejection(serviceFor('org-a').startBooking({ vin: b, deviceId: 'dev-keep', startTimestamp: 200 }));
    expect(error.code).toBe('CONFLICT');
    expect((await serviceFor('org-a').getVehicle(a)).deviceId).toBe('dev-keep');
    expect((await serviceFor('org-a').getVehicle(b)).deviceId).toBe('dev-other');
  });

  it('applies the start rules before touching the database', async () => {
    const vin = nextVin();
    await serviceFor('org-a').createVehicle(vin);
    const svc = serviceFor('org-a');
    expect((await rejection(svc.startBooking({ vin, startTimestamp: 10, estimatedEndTimestamp: 10 }))).extensions.field).toBe('input.estimatedEndTimestamp');
    expect((await rejection(svc.startBooking({ vin, startTimestamp: 10 }))).extensions.field).toBe('input.deviceId');
    expect((await rejection(svc.startBooking({ vin: nextVin(), deviceId: 'd', startTimestamp: 10 }))).code).toBe('NOT_FOUND');
    expect((await rejection(svc.startBooking({ vin, deviceId: 'd', startTimestamp: 10, bookingId: ' ' }))).extensions.field).toBe('input.bookingId');
    expect(await allRows(Booking, { vin })).toHaveLength(0);
  });

  it('generates missing ids, ends once, and keeps the end later than the start', async () => {
    const vin = nextVin();
    await serviceFor('org-a').createVehicle(vin, `dev-${vin}`);
    const started = await serviceFor('org-a').startBooking({ vin, startTimestamp: 1_000, userId: null, bookingId: null });
    expect(started.bookingId).toMatch(/^[0-9a-f-]{36}$/);
    expect(started.userId).toMatch(/^[0-9a-f-]{36}$/);
    expect(started.deviceId).toBe(`dev-${vin}`);
    expect((await rejection(serviceFor('org-a').endBooking(started.bookingId, 1_000))).code).toBe('BAD_USER_INPUT');
    const ended = await serviceFor('org-a').endBooking(started.bookingId, 1_500);
    expect(ended.actualEndTimestamp).toBe(1_500);
    expect((await rejection(serviceFor('org-a').endBooking(started.bookingId, 1_600))).code).toBe('CONFLICT');
    expect((await rejection(serviceFor('org-a').endBooking('no-such-booking', 1_600))).code).toBe('NOT_FOUND');
    const [row] = await allRows(Booking, { bookingId: started.bookingId });
    expect(row.actualEndTimestamp).toBe(1_500);
  });

  it('the database itself refuses overlapping periods and ends before starts', async () => {
    const vin = nextVin();
    await serviceFor('org-a').createVehicle(vin, `dev-${vin}`);
    await serviceFor('org-a').startBooking({ vin, startTimestamp: 1_000, estimatedEndTimestamp: 2_000 });
    const conn = db.orm.em.getConnection();
    const insert = (start: number, end: number | null, id: string) => conn.execute(
      `insert into "booking"."bookings" (id, org_id, booking_id, vin, user_id, device_id, start_timestamp, estimated_end_timestamp, created_at, updated_at)
       values (gen_random_uuid(), 'org-a', ?, ?, 'u', 'd', ?, ?, now(), now())`, [id, vin, start, end]);
    await expect(insert(1_999, 2_500, `raw-1-${vin}`)).rejects.toMatchObject({ code: '23P01' });
    await expect(insert(3_000, 2_500, `raw-2-${vin}`)).rejects.toMatchObject({ code: '23514' });
    await insert(2_000, 2_500, `raw-3-${vin}`);
    expect(await allRows(Booking, { vin })).toHaveLength(2);
  });

  it('keeps organisations apart: same VIN, same device, overlapping periods, same booking id', async () => {
    const vin = nextVin();
    await serviceFor('org-a').createVehicle(vin, 'dev-shared');
    await serviceFor('org-b').createVehicle(vin, 'dev-shared');
    await serviceFor('org-a').startBooking({ vin, startTimestamp: 100, bookingId: `iso-${vin}` });
    await serviceFor('org-b').startBooking({ vin, startTimestamp: 100, bookingId: `iso-${vin}` });
    expect(await allRows(Vehicle, { vin, deviceId: 'dev-shared' })).toHaveLength(2);
    expect((await rejection(serviceFor('org-c').getBooking(`iso-${vin}`))).code).toBe('NOT_FOUND');
    expect((await serviceFor('org-c').listBookings({ vin }, 10)).rows).toEqual([]);
  });
});
