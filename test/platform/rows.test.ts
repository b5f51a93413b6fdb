import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EntityManager, EntityName } from '@mikro-orm/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { openDatabase, type Database } from '../../subgraphs/platform/db/orm.ts';
import { TENANT_FILTER } from '../../subgraphs/platform/db/tenant.ts';
import { AppError } from '../../subgraphs/platform/errors.ts';
import { keyedRowLoader } from '../../subgraphs/platform/loaders.ts';
import { escapeLiteral, type WritesLiterals } from '../../subgraphs/platform/db/literals.ts';
import { readStatement, selectRows } from '../../subgraphs/platform/db/read-statement.ts';
import { booking } from '../../subgraphs/booking/index.ts';
import { Booking, Vehicle } from '../../subgraphs/booking/entities.ts';
import { createLoaders } from '../../subgraphs/booking/loaders.ts';
import { decodeCursor, encodeCursor, type Page } from '../../subgraphs/booking/paging.ts';
import { BookingService } from '../../subgraphs/booking/service.ts';
import { scoring } from '../../subgraphs/scoring/index.ts';
import { User } from '../../subgraphs/scoring/entities.ts';
import { UserService } from '../../subgraphs/scoring/service.ts';
import { testDatabase } from '../support/database.ts';

/** Plain rows (platform/db/rows.ts) against what MikroORM hydrates from the same rows, on the real database. */
let bookingDb: Database;
let scoringDb: Database;
let dataDir: string;
let dropDatabase: () => Promise<void>;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'frg-rows-'));
  const database = await testDatabase();
  dropDatabase = database.drop;
  const config = loadConfig({ ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATA_DIR: dataDir, DATABASE_URL: undefined, ...database.env });
  bookingDb = await openDatabase(config, { name: booking.name, entities: booking.entities, migrationsPath: booking.migrationsPath });
  scoringDb = await openDatabase(config, { name: scoring.name, entities: scoring.entities, migrationsPath: scoring.migrationsPath });
});
afterAll(async () => {
  await bookingDb?.close();
  await scoringDb?.close();
  await dropDatabase?.();
  await rm(dataDir, { recursive: true, force: true });
});

/** A request's EntityManager for `org` (null: none set, as for an anonymous caller). */
function emFor(db: Database, org: string | null): EntityManager {
  const em = db.orm.em.fork({ clear: true, useContext: false });
  if (org) em.setFilterParams(TENANT_FILTER, { orgId: org });
  return em;
}

/** The scalar properties of a hydrated entity, as a plain row should carry them (no orgId). */
function expected(em: EntityManager, entity: object, type: typeof Booking | typeof Vehicle | typeof User) {
  const meta = em.getMetadata().get(type as EntityName<object>);
  return Object.fromEntries(meta.props.filter((p) => p.name !== 'orgId').map((p) => [p.name, (entity as Record<string, unknown>)[p.name]]));
}

describe('plain rows', () => {
  it('carry exactly the values hydration gives, nulls, dates and bigint numbers included', async () => {
    const org = 'rows-org';
    const service = new BookingService(emFor(bookingDb, org));
    await service.createVehicle('ROWS0000000000001', 'rows-device-1');
    await service.createVehicle('ROWS0000000000002');
    await service.startBooking({ vin: 'ROWS0000000000001', bookingId: 'rows-ended', userId: 'rows-user', startTimestamp: 4_102_444_800, estimatedEndTimestamp: 4_102_448_400 });
    await service.endBooking('rows-ended', 4_102_446_000);
    await service.startBooking({ vin: 'ROWS0000000000001', bookingId: 'rows-active', userId: 'rows-user', startTimestamp: 4_102_450_000 });
    await new UserService(emFor(scoringDb, org)).create({ userId: 'rows-user', homeZip: '60601' });

    const cases = [
      { db: bookingDb, entity: Booking, key: 'bookingId', ids: ['rows-ended', 'rows-active'] },
      { db: bookingDb, entity: Vehicle, key: 'vin', ids: ['ROWS0000000000001', 'ROWS0000000000002'] },
      { db: scoringDb, entity: User, key: 'userId', ids: ['rows-user'] },
    ] as const;
    for (const { db, entity, key, ids } of cases) {
      const em = emFor(db, org);
      const rows = await keyedRowLoader(em, entity as never, key as never).loadMany(ids);
      const entities = await emFor(db, org).find(entity as never, { [key]: { $in: ids } } as never);
      expect(entities).toHaveLength(ids.length);
      for (const [i, id] of ids.entries()) {
        const hydrated = entities.find((e) => (e as Record<string, unknown>)[key] === id) as object;
        expect(rows[i], `${entity.name} ${id}`).toEqual(expected(em, hydrated, entity));
      }
    }
    const [ended, active] = await keyedRowLoader(emFor(bookingDb, org), Booking, 'bookingId').loadMany(['rows-ended', 'rows-active']) as Booking[];
    expect(ended).toMatchObject({ startTimestamp: 4_102_444_800, actualEndTimestamp: 4_102_446_000, estimatedEndTimestamp: 4_102_448_400 });
    expect(ended.createdAt).toBeInstanceOf(Date);
    expect(active).toMatchObject({ actualEndTimestamp: null, estimatedEndTimestamp: null });
  });

  it('are scoped to the caller\'s organisation, and a read without one fails closed', async () => {
    await new BookingService(emFor(bookingDb, 'rows-a')).createVehicle('ROWSSCOPE00000001', 'device-a');
    await new BookingService(emFor(bookingDb, 'rows-b')).createVehicle('ROWSSCOPE00000002', 'device-b');
    const b = keyedRowLoader(emFor(bookingDb, 'rows-b'), Vehicle, 'vin');
    expect(await b.loadMany(['ROWSSCOPE00000001', 'ROWSSCOPE00000002'])).toEqual([null, expect.objectContaining({ vin: 'ROWSSCOPE00000002', deviceId: 'device-b' })]);
    const pages = createLoaders(emFor(bookingDb, 'rows-b')).bookingsByUser;
    expect((await pages.load({ parent: 'rows-user', first: 5, after: null, status: null })).rows).toEqual([]);

    const none = keyedRowLoader(emFor(bookingDb, null), Vehicle, 'vin').load('ROWSSCOPE00000001');
    await expect(none).rejects.toBeInstanceOf(AppError);
    await expect(createLoaders(emFor(bookingDb, null)).bookingsByVin.load({ parent: 'ROWSSCOPE00000001', first: 5, after: null, status: null }))
      .rejects.toBeInstanceOf(AppError);
  });
});

describe('booking pages as plain rows', () => {
  const org = 'pages-org';
  const vins = ['PAGES000000000001', 'PAGES000000000002', 'PAGES000000000003'];

  beforeAll(async () => {
    const service = new BookingService(emFor(bookingDb, org));
    for (const [v, vin] of vins.entries()) {
      await service.createVehicle(vin, `pages-device-${v}`);
      // Equal start times across vehicles (a user's bookings then tie on start) and ids that sort apart from their order exercise the tie-break.
      for (let i = 0; i < 4 + v; i++) {
        const bookingId = `pages-${v}-${(7 * i) % 10}`;
        const start = 4_102_444_800 + i * 10_000;
        await service.startBooking({ vin, bookingId, userId: `pages-user-${i % 2}`, startTimestamp: start, estimatedEndTimestamp: start + 3600 });
        if (i % 3 === 0) await service.endBooking(bookingId, start + 1800);
      }
    }
  });

  it('equal the service\'s pages (MikroORM) for one parent and for many, with every status and cursor', async () => {
    const service = new BookingService(emFor(bookingDb, org));
    const parents = { vin: vins, userId: ['pages-user-0', 'pages-user-1', 'pages-nobody'] } as const;
    const ids = (p: Page<{ bookingId: string }>) => ({ ids: p.rows.map((r) => r.bookingId), more: p.hasNextPage });
    let compared = 0;
    for (const field of ['vin', 'userId'] as const) {
      const pagesOf = (em: EntityManager) => (field === 'vin' ? createLoaders(em).bookingsByVin : createLoaders(em).bookingsByUser);
      for (const status of [null, 'ACTIVE', 'ENDED'] as const) {
        for (const first of [1, 2, 100]) {
          // Every parent's pages in turn: by the service, by the loader for that parent alone, and for all parents at once.
          let cursors = new Map<string, string | null>(parents[field].map((p) => [p, null]));
          while (cursors.size) {
            const keys = [...cursors].map(([parent, after]) => ({ parent, first, after: decodeCursor(after), status }));
            const together = await pagesOf(emFor(bookingDb, org)).loadMany(keys);
            const next = new Map<string, string | null>();
            for (const [i, [parent, after]] of [...cursors].entries()) {
              const reference = await service.listBookings({ [field]: parent, status }, first, after);
              const alone = await pagesOf(emFor(bookingDb, org)).load(keys[i]);
              const label = `${field}=${parent} status=${status} first=${first} after=${after}`;
              expect(ids(alone), label).toEqual(ids(reference));
              expect(ids(together[i] as Page<Booking>), label).toEqual(ids(reference));
              compared += 1;
              const last = reference.rows.at(-1);
              if (reference.hasNextPage && last) next.set(parent, encodeCursor({ start: last.startTimestamp, bookingId: last.bookingId }));
            }
            cursors = next;
          }
        }
      }
    }
    expect(compared).toBeGreaterThan(50);
  });

  it('cost one statement for many parents', async () => {
    const loaders = createLoaders(emFor(bookingDb, org));
    const before = bookingDb.statements.count;
    const pages = await Promise.all(vins.map((parent) => loaders.bookingsByVin.load({ parent, first: 2, after: null, status: null })));
    expect(bookingDb.statements.count - before).toBe(1);
    expect(pages.map((p) => p.rows.length)).toEqual([2, 2, 2]);
    expect(pages.every((p) => p.hasNextPage)).toBe(true);
  });

  it('carry a user\'s vehicles along: Booking.vehicle then costs no statement, and sees only the caller\'s organisation', async () => {
    const loaders = createLoaders(emFor(bookingDb, org));
    const before = bookingDb.statements.count;
    const [page] = await Promise.all([loaders.bookingsByUser.load({ parent: 'pages-user-0', first: 100, after: null, status: null })]);
    const vehicles = await loaders.vehicleByVin.loadMany(page.rows.map((b) => b.vin));
    expect(bookingDb.statements.count - before).toBe(1);
    expect(new Set(vehicles.map((v) => (v as { vin: string }).vin))).toEqual(new Set(vins));
    const reference = await keyedRowLoader(emFor(bookingDb, org), Vehicle, 'vin').loadMany(vins);
    for (const v of vehicles) expect(v).toEqual(reference.find((r) => (r as { vin: string }).vin === (v as { vin: string }).vin));
    expect(Object.keys(page.rows[0]).some((k) => k.startsWith('vehicle'))).toBe(false);

    // Another organisation reusing the VINs and the user id sees its own rows only.
    const other = new BookingService(emFor(bookingDb, 'pages-other'));
    await other.createVehicle(vins[0], 'other-device');
    await other.startBooking({ vin: vins[0], bookingId: 'other-booking', userId: 'pages-user-0', startTimestamp: 4_102_444_800 });
    const theirs = createLoaders(emFor(bookingDb, 'pages-other'));
    const [own] = (await theirs.bookingsByUser.load({ parent: 'pages-user-0', first: 100, after: null, status: null })).rows;
    expect(own.bookingId).toBe('other-booking');
    expect(await theirs.vehicleByVin.load(vins[0])).toMatchObject({ deviceId: 'other-device' });
  });
});

describe('read statements', () => {
  const echo = readStatement('select $1::text as a, $2::int as b, $3::text[] as c, $4::text as d');

  it('pass values through intact, quotes, backslashes and placeholders in them included', async () => {
    const tricky = ["it's", 'back\\slash', '$1 $2', "'; drop table x; --", 'ü "é"'];
    for (const value of tricky) {
      const [row] = await selectRows(emFor(bookingDb, null), echo, [value, 42, [value, 'plain'], null]);
      expect(row).toEqual({ a: value, b: 42, c: [value, 'plain'], d: null });
    }
    await expect(selectRows(emFor(bookingDb, null), echo, [{ not: 'allowed' } as never, 1, [], null])).rejects.toBeInstanceOf(TypeError);
  });

  it('inline their values as literals inside a transaction, written by the fast escaping (db/literals.ts)', async () => {
    expect((bookingDb.orm.em.getPlatform() as unknown as WritesLiterals).escapeLiteral).toBe(escapeLiteral);
    for (const value of ["it's", 'back\\slash', "both ' and \\", JSON.stringify({ note: "it's \\ \"quoted\"" })]) {
      const [row] = await emFor(bookingDb, null).transactional((tx) => selectRows(tx, echo, [value, 1, [value], null]));
      expect(row).toEqual({ a: value, b: 1, c: [value], d: null });
    }
  });

  it('are counted as one statement each, inside a transaction too, and survive a session that lost its prepared statements', async () => {
    const em = emFor(bookingDb, null);
    const before = bookingDb.statements.count;
    await selectRows(em, echo, ['x', 1, [], null]);
    await selectRows(em, echo, ['y', 2, [], null]);
    expect(bookingDb.statements.count - before).toBe(2);
    await em.transactional(async (tx) => {
      expect(await selectRows(tx, echo, ['in tx', 3, ['a'], 'd'])).toEqual([{ a: 'in tx', b: 3, c: ['a'], d: 'd' }]);
    });
    // As after the database was reopened: nothing prepared any more.
    await bookingDb.orm.em.getConnection().executeDump('deallocate all');
    expect(await selectRows(em, echo, ['again', 4, [], null])).toEqual([{ a: 'again', b: 4, c: [], d: null }]);
    const [first, second] = await Promise.all([selectRows(em, readStatement('select $1::text as v'), ['one']), selectRows(em, readStatement('select $1::text as v'), ['two'])]);
    expect([first, second]).toEqual([[{ v: 'one' }], [{ v: 'two' }]]);
  });

  it.skipIf(process.env.DATABASE_URL)('on PGlite, a keyed read runs its prepared generic plan, not planned again per execution', async () => {
    const loader = keyedRowLoader(emFor(bookingDb, 'plans-org'), Vehicle, 'vin');
    for (let i = 0; i < 7; i++) await loader.clearAll().load(`PLAN${String(i).padStart(13, '0')}`);
    const [prepared, ...others] = await bookingDb.orm.em.getConnection().execute(`select generic_plans, custom_plans from pg_prepared_statements where statement like '%from "booking"."vehicles" as t where%'`);
    expect(others).toEqual([]);
    expect(prepared).toMatchObject({ custom_plans: 0 });
    expect(Number(prepared.generic_plans)).toBeGreaterThanOrEqual(7);
  });
});
