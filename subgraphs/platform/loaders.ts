import DataLoader from 'dataloader';
import type { EntityManager, EntityName } from '@mikro-orm/core';

/**
 * A per-request loader of entities by a unique key: one `where key in (...)` query per tick, results
 * in the order asked, null where none. The tenant filter on the EntityManager scopes it.
 */
export function keyedLoader<T extends object, K extends keyof T & string>(em: EntityManager, entity: EntityName<T>, key: K) {
  return new DataLoader<string, T | null>(async (keys) => {
    const rows = await em.find(entity, { [key]: { $in: [...keys] } } as never);
    const byKey = new Map(rows.map((row) => [String(row[key]), row]));
    return keys.map((k) => byKey.get(k) ?? null);
  });
}

/** A per-request loader of lists grouped by a foreign key (e.g. a user's bookings). */
export function groupedLoader<T extends object, K extends keyof T & string>(
  em: EntityManager, entity: EntityName<T>, key: K, orderBy: Record<string, 'asc' | 'desc'> = {},
) {
  return new DataLoader<string, T[]>(async (keys) => {
    const rows = await em.find(entity, { [key]: { $in: [...keys] } } as never, { orderBy } as never);
    const groups = new Map<string, T[]>(keys.map((k) => [k, []]));
    for (const row of rows) groups.get(String(row[key]))?.push(row);
    return keys.map((k) => groups.get(k) ?? []);
  });
}
