import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/core';
import { keyedRowLoader } from '../platform/loaders.ts';
import { rowShape, tenantOf, type Plain, type RowShape } from '../platform/db/rows.ts';
import { selectRows, statementOf } from '../platform/db/read-statement.ts';
import { Booking, Vehicle, type BookingStatus } from './entities.ts';
import { toPage, type BookingCursor, type Page } from './paging.ts';

export type BookingRow = Plain<Booking>;
export type VehicleRow = Plain<Vehicle>;

/** One page of one parent's bookings: the parent key (a VIN or a user id) and the page arguments. */
export interface BookingPageKey {
  parent: string;
  first: number;
  after: BookingCursor | null;
  status: BookingStatus | null;
}

type GroupField = 'vin' | 'userId';

const argsKey = (k: BookingPageKey) => JSON.stringify([k.first, k.after?.start ?? null, k.after?.bookingId ?? null, k.status]);

/** Prefix of the joined vehicle's columns in a page row. */
const VEHICLE = 'vehicle.';

/** The statement of one kind of page (grouping field, one parent or many, status, cursor), built once per ORM. */
function pageStatement(em: EntityManager, field: GroupField, many: boolean, status: BookingStatus | null, cursor: boolean) {
  const shape = rowShape(em, Booking);
  const vehicle = rowShape(em, Vehicle);
  const statement = statementOf(shape, `page|${field}|${many}|${status}|${cursor}`, () => pageText(shape, vehicle, field, many, status, cursor));
  return { shape, vehicle, statement };
}

function pageText(shape: RowShape<Booking>, vehicle: RowShape<Vehicle>, field: GroupField, many: boolean, status: BookingStatus | null, cursor: boolean) {
  // Values: the parent(s), the organisation, the cursor (start, bookingId) if any, the row limit.
  const [parents, org, start, bookingId, limit] = cursor ? ['$1', '$2', '$3', '$4', '$5'] : ['$1', '$2', '', '', '$3'];
  const c = (property: keyof Booking & string) => `b.${shape.column(property)}`;
  const where = [
    `${c('orgId')} = ${org}`,
    many ? `${c(field)} = p.parent` : `${c(field)} = ${parents}`,
    ...(status === 'ACTIVE' ? [`${c('actualEndTimestamp')} is null`] : status === 'ENDED' ? [`${c('actualEndTimestamp')} is not null`] : []),
    ...(cursor ? [`(${c('startTimestamp')} < ${start} or (${c('startTimestamp')} = ${start} and ${c('bookingId')} < ${bookingId}))`] : []),
  ].join(' and ');
  // A user's bookings are of many vehicles: each row carries its vehicle (one join instead of a
  // statement for Booking.vehicle). A vehicle's bookings are of the vehicle already loaded.
  const join = field === 'userId'
    ? ` left join ${vehicle.table} as v on v.${vehicle.column('orgId')} = ${c('orgId')} and v.${vehicle.column('vin')} = ${c('vin')}`
    : '';
  const columns = field === 'userId' ? `${shape.columns('b')}, ${vehicle.columns('v', VEHICLE)}` : shape.columns('b');
  // BOOKING_ORDER: most recent start first, bookingId breaking ties.
  const page = `select ${columns} from ${shape.table} as b${join} where ${where} order by ${c('startTimestamp')} desc, ${c('bookingId')} desc limit ${limit}`;
  // Many parents: the same page per parent (an index scan each), in one statement.
  return many ? `select x.* from unnest(${parents}::text[]) as p(parent) cross join lateral (${page}) as x` : page;
}

/**
 * Pages of bookings grouped by `field`, for many parents at once: the keys of one tick that share
 * the page arguments cost ONE statement keeping `first + 1` rows per parent, scoped to the caller's
 * organisation. Rows are plain (db/rows.ts): resolvers only read them. The vehicles read with a
 * user's bookings are handed to `vehicles` (the request's vehicleByVin).
 */
export function bookingPagesLoader(em: EntityManager, field: GroupField, vehicles: DataLoader<string, VehicleRow | null>) {
  return new DataLoader<BookingPageKey, Page<BookingRow>, string>(async (keys) => {
    const groups = new Map<string, BookingPageKey[]>();
    for (const key of keys) {
      const group = groups.get(argsKey(key)) ?? [];
      group.push(key);
      groups.set(argsKey(key), group);
    }
    const orgId = tenantOf(em);
    const pages = new Map<string, Page<BookingRow>>();
    await Promise.all([...groups.values()].map(async (group) => {
      const { first, after, status } = group[0];
      const parents = [...new Set(group.map((k) => k.parent))];
      const many = parents.length > 1;
      const { shape, vehicle, statement } = pageStatement(em, field, many, status, after !== null);
      const cursor = after ? [after.start, after.bookingId] : [];
      const rows = (await selectRows(em, statement, [many ? parents : parents[0], orgId, ...cursor, first + 1])).map((row) => {
        if (field !== 'userId') return shape.map(row);
        const joined = vehicle.mapPrefixed(row, VEHICLE);
        if (joined) vehicles.prime(joined.vin, joined);
        return shape.mapPrefixed(row, '') as BookingRow;
      });
      const byParent = new Map<string, BookingRow[]>(parents.map((p) => [p, []]));
      for (const row of rows) byParent.get(row[field])?.push(row);
      for (const key of group) pages.set(`${argsKey(key)}|${key.parent}`, toPage(byParent.get(key.parent) ?? [], first));
    }));
    return keys.map((k) => pages.get(`${argsKey(k)}|${k.parent}`) ?? { rows: [], hasNextPage: false });
  }, { cacheKeyFn: (k) => `${argsKey(k)}|${k.parent}` });
}

export function createLoaders(em: EntityManager) {
  const vehicleByVin = keyedRowLoader(em, Vehicle, 'vin');
  return {
    vehicleByVin,
    bookingById: keyedRowLoader(em, Booking, 'bookingId'),
    bookingsByVin: bookingPagesLoader(em, 'vin', vehicleByVin),
    bookingsByUser: bookingPagesLoader(em, 'userId', vehicleByVin),
  };
}

export type BookingLoaders = ReturnType<typeof createLoaders>;
