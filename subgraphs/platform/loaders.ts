import DataLoader from 'dataloader';
import type { EntityManager, EntityName } from '@mikro-orm/core';
import { rowShape, tenantOf, type Plain } from './db/rows.ts';
import { selectRows, statementOf } from './db/read-statement.ts';

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

/**
 * The rows of `entity` whose `key` is one of `keys` (in `orderBy`'s order, if any), as plain rows
 * (see db/rows.ts) of the caller's organisation: one fixed statement, on `em`'s transaction when it
 * has one.
 */
export async function rowsByKeys<T extends object, K extends keyof T & string>(
  em: EntityManager, entity: EntityName<T>, key: K, keys: readonly string[], orderBy: Order<T> = {},
): Promise<Plain<T>[]> {
  const shape = rowShape(em, entity);
  const order = Object.entries(orderBy).map(([property, direction]) => `t.${shape.column(property as keyof T & string)} ${direction}`);
  const read = statementOf(shape, `${key}|${order.join(',')}`, () => {
    const where = shape.tenant ? `t.${shape.column('orgId')} = $1 and t.${shape.column(key)} = any($2)` : `t.${shape.column(key)} = any($1)`;
    return `select ${shape.columns('t')} from ${shape.table} as t where ${where}${order.length ? ` order by ${order.join(', ')}` : ''}`;
  });
  const rows = await selectRows(em, read, shape.tenant ? [tenantOf(em), [...keys]] : [[...keys]]);
  return rows.map((row) => shape.map(row));
}

type Order<T> = Partial<Record<keyof T & string, 'asc' | 'desc'>>;

/**
 * keyedLoader's read-only twin for lookups whose results are only read (resolvers): plain rows,
 * no hydration or identity map, one statement per tick (rowsByKeys).
 */
export function keyedRowLoader<T extends object, K extends keyof T & string>(em: EntityManager, entity: EntityName<T>, key: K) {
  return new DataLoader<string, Plain<T> | null>(async (keys) => {
    const found = new Map<string, Plain<T>>();
    for (const row of await rowsByKeys(em, entity, key, keys)) found.set(String(row[key as keyof Plain<T>]), row);
    return keys.map((k) => found.get(k) ?? null);
  });
}

/** groupedLoader's read-only twin (see keyedRowLoader): plain rows grouped by `key`, in `orderBy`'s order. */
export function groupedRowLoader<T extends object, K extends keyof T & string>(
  em: EntityManager, entity: EntityName<T>, key: K, orderBy: Order<T> = {},
) {
  return new DataLoader<string, Plain<T>[]>(async (keys) => {
    const groups = new Map<string, Plain<T>[]>(keys.map((k) => [k, []]));
    for (const row of await rowsByKeys(em, entity, key, keys, orderBy)) groups.get(String(row[key as keyof Plain<T>]))?.push(row);
    return keys.map((k) => groups.get(k) ?? []);
  });
}
