import type { EntityManager } from '@mikro-orm/core';
import { setImmediate } from 'node:timers/promises';

/**
 * A read of the Risk Index's tables, after a turn of the event loop. On PGlite every statement runs
 * on the event loop, and an evaluation runs from the gateway down to here as one chain of promises:
 * without the turn, the statements of every evaluation in flight run back to back, and every other
 * request (/healthz included) waits for all of them.
 */
export async function readRows<T>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T[]> {
  await setImmediate();
  return em.getConnection().execute<T[]>(sql, params);
}
