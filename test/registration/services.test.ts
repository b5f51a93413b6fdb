import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EntityManager } from '@mikro-orm/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { openDatabase, type Database } from '../../subgraphs/platform/db/orm.ts';
import { TENANT_FILTER } from '../../subgraphs/platform/db/tenant.ts';
import { registration } from '../../subgraphs/registration/index.ts';
import { DeviceAssociation, type Consent } from '../../subgraphs/registration/entities.ts';
import { findProduct } from '../../subgraphs/registration/products.ts';
import { ConsentService, currentConsents } from '../../subgraphs/registration/services/consents.ts';
import { isCurrent, RegisteredDeviceService } from '../../subgraphs/registration/services/devices.ts';
import { ProductRegistrationService } from '../../subgraphs/registration/services/products.ts';
import { RegisteredUserService } from '../../subgraphs/registration/services/users.ts';
import { testDatabase } from '../support/database.ts';

let db: Database;
let dataDir: string;
let drop: () => Promise<void>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'frg-reg-'));
  const database = await testDatabase();
  drop = database.drop;
  const config = loadConfig({ ...process.env, DATABASE_URL: undefined, LOG_LEVEL: 'warn', DATA_DIR: dataDir, ...database.env });
  db = await openDatabase(config, { name: registration.name, entities: registration.entities, migrationsPath: registration.migrationsPath });
});
afterAll(async () => {
  await db?.close();
  await drop?.();
  await rm(dataDir, { recursive: true, force: true });
});

/** A request-like EntityManager in one organisation. */
function emFor(orgId: string): EntityManager {
  const em = db.orm.em.fork({ clear: true });
  em.setFilterParams(TENANT_FILTER, { orgId });
  return em;
}

describe('pure rules', () => {
  it('matches product names without case or separators', () => {
    expect(findProduct('driving-behavior')?.name).toBe('Driving Behavior');
    expect(findProduct('DRIVING_BEHAVIOR')?.name).toBe('Driving Behavior');
    expect(findProduct('Driving')).toBeUndefined();
  });

  it('an association is current while open or until its end date', () => {
    const a = (effectiveFrom: string, effectiveTo: string | null) => ({ effectiveFrom, effectiveTo }) as DeviceAssociation;
    expect(isCurrent(a('2026-01-01', null), '2026-06-01')).toBe(true);
    expect(isCurrent(a('2026-01-01', '2026-06-01'), '2026-06-01')).toBe(false);
    expect(isCurrent(a('2026-01-01', '2026-06-02'), '2026-06-01')).toBe(true);
    expect(isCurrent(a('2026-07-01', '2026-08-01'), '2026-06-01')).toBe(false);
  });

  it('the current consent per type is the latest record in time', () => {
    const c = (type: string, action: string, at: string) => ({ type, action, timestamp: new Date(at), recordedAt: new Date(at) }) as Consent;
    const current = currentConsents([c('b', 'granted', '2026-01-01'), c('a', 'granted', '2026-01-02'), c('a', 'withdrawn', '2026-01-03')]);
    expect(current.map((x) => [x.type, x.action])).toEqual([['a', 'withdrawn'], ['b', 'granted']]);
  });
});

describe('services against the database', () => {
  it('replacement ends the old row and opens a new one; rows are never overwritten', async () => {
    const em = emFor('svc-org');
    await new RegisteredUserService(em).create({ userId: 'svc-u' });
    const devices = new RegisteredDeviceService(em);
    await devices.assignToUser('svc-a', 'svc-u', { effectiveDate: '2026-01-01' });
    const first = await em.findOneOrFail(DeviceAssociation, { deviceId: 'svc-a' });
    const replacement = await devices.replace('svc-a', { newDeviceId: 'svc-b', effectiveDate: '2026-03-01' });
    expect(replacement).toMatchObject({ deviceId: 'svc-b', replacesDeviceId: 'svc-a', status: 'Active' });
    const rows = await emFor('svc-org').find(DeviceAssociation, {}, { orderBy: { effectiveFrom: 'asc' } });
    expect(rows.map((r) => [r.id === first.id, r.deviceId, r.effectiveFrom, r.effectiveTo, r.endReason])).toEqual([
      [true, 'svc-a', '2026-01-01', '2026-03-01', 'replaced'],
      [false, 'svc-b', '2026-03-01', null, null],
    ]);
    expect(rows.every((r) => r.orgId === 'svc-org')).toBe(true);
  });

  it('the database refuses a second open association of one device', async () => {
    const em = emFor('svc-org');
    const open = await em.findOneOrFail(DeviceAssociation, { deviceId: 'svc-b', effectiveTo: null });
    em.create(DeviceAssociation, { deviceId: 'svc-b', userId: open.userId, vehicleId: null, effectiveFrom: '2027-01-01', effectiveTo: null, endReason: null, endedAt: null } as never);
    await expect(em.flush()).rejects.toMatchObject({ code: '23505' });
  });

  it('the database refuses to rewrite or delete association history', async () => {
    const ended = await emFor('svc-org').findOneOrFail(DeviceAssociation, { deviceId: 'svc-a' });
    const em = emFor('svc-org');
    const row = await em.findOneOrFail(DeviceAssociation, { id: ended.id });
    row.effectiveTo = '2026-04-01';
    await expect(em.flush()).rejects.toThrow(/never rewritten/);
    await expect(emFor('svc-org').nativeDelete(DeviceAssociation, { id: ended.id })).rejects.toThrow(/never rewritten/);
    expect((await emFor('svc-org').findOneOrFail(DeviceAssociation, { id: ended.id })).effectiveTo).toBe('2026-03-01');
  });

  it('the database refuses overlapping periods of one device', async () => {
    const em = emFor('svc-org');
    em.create(DeviceAssociation, { deviceId: 'svc-a', userId: 'svc-u', vehicleId: null, effectiveFrom: '2026-02-01', effectiveTo: '2026-02-15', endReason: 'ended', endedAt: new Date() } as never);
    await expect(em.flush()).rejects.toMatchObject({ code: '23P01' });
  });

  it('consent gating names the missing consents; a grant then lets the product in', async () => {
    const em = emFor('svc-org');
    const products = new ProductRegistrationService(em);
    await expect(products.registerUserOne('svc-u', 'Crash Detection', null)).rejects.toMatchObject({ extensions: { code: 'CONFLICT', missingConsents: ['location-tracking'] } });
    await new ConsentService(em).record({ userId: 'svc-u', type: 'location-tracking', version: '1', granted: true, source: 'test' });
    const row = await products.registerUserOne('svc-u', 'crash detection', { x: 1 });
    expect(row).toMatchObject({ productName: 'Crash Detection', status: 'enrolled', additionalParameters: { x: 1 } });
    await products.unenrollUser('svc-u', 'Crash Detection');
    await expect(products.registerUserOne('svc-u', 'Crash Detection', null)).rejects.toMatchObject({ extensions: { code: 'CONFLICT' } });
  });

  it('another organisation sees none of it', async () => {
    const other = emFor('svc-other');
    await expect(new RegisteredUserService(other).get('svc-u')).rejects.toMatchObject({ extensions: { code: 'NOT_FOUND' } });
    expect(await other.find(DeviceAssociation, {})).toEqual([]);
  });
});
