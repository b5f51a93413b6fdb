import DataLoader from 'dataloader';
import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { keyedLoader } from '../platform/loaders.ts';
import { Booking, Vehicle, type BookingStatus } from './entities.ts';
import { afterCursor, BOOKING_ORDER, toPage, type BookingCursor, type Page } from './paging.ts';
import { bookingWhere } from './service.ts';

/** One page of one parent's bookings: the parent key (a VIN or a user id) and the page arguments. */
export interface BookingPageKey {
  parent: string;
  first: number;
  after: BookingCursor | null;
  status: BookingStatus | null;
}

type GroupField = 'vin' | 'userId';

const argsKey = (k: BookingPageKey) => JSON.stringify([k.first, k.after?.start ?? null, k.after?.bookingId ?? null, k.status]);

/**
 * Pages of bookings grouped by `field`, for many parents at once: the keys of one tick that share
 * the page arguments cost ONE statement, `row_number() over (partition by <field> ...)` keeping
 * `first + 1` rows per parent. The tenant filter is applied to the query builder explicitly.
 */
export function bookingPagesLoader(em: EntityManager, field: GroupField) {
  return new DataLoader<BookingPageKey, Page<Booking>, string>(async (keys) => {
    const groups = new Map<string, BookingPageKey[]>();
    for (const key of keys) {
      const group = groups.get(argsKey(key)) ?? [];
      group.push(key);
      groups.set(argsKey(key), group);
    }
    const pages = new Map<string, Page<Booking>>();
    await Promise.all([...groups.values()].map(async (group) => {
      const { first, after, status } = group[0];
      const parents = [...new Set(group.map((k) => k.parent))];
      const qb = (em as SqlEntityManager).createQueryBuilder(Booking, 'b')
        .select('*')
        .where({ $and: [{ [field]: { $in: parents } }, bookingWhere({ status }), afterCursor(after)] } as never)
        .orderBy([...BOOKING_ORDER] as never);
      await qb.applyFilters();
      qb.setPartitionLimit({ partitionBy: field, limit: first + 1 });
      const rows = await qb.getResultList();
      const byParent = new Map<string, Booking[]>(parents.map((p) => [p, []]));
      for (const row of rows) byParent.get(row[field])?.push(row);
      for (const key of group) pages.set(`${argsKey(key)}|${key.parent}`, toPage(byParent.get(key.parent) ?? [], first));
    }));
    return keys.map((k) => pages.get(`${argsKey(k)}|${k.parent}`) ?? { rows: [], hasNextPage: false });
  }, { cacheKeyFn: (k) => `${argsKey(k)}|${k.parent}` });
}

export const createLoaders = (em: EntityManager) => ({
  vehicleByVin: keyedLoader(em, Vehicle, 'vin'),
  bookingById: keyedLoader(em, Booking, 'bookingId'),
  bookingsByVin: bookingPagesLoader(em, 'vin'),
  bookingsByUser: bookingPagesLoader(em, 'userId'),
});

export type BookingLoaders = ReturnType<typeof createLoaders>;
