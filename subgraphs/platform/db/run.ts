import type { SqlEntityManager } from '@mikro-orm/sql';
import type { Database } from './orm.ts';

export type Row = Record<string, unknown>;
/** Runs one SQL statement (`?` placeholders), returning its rows. */
export type Run = (sql: string, params?: unknown[]) => Promise<Row[]>;

/** Statements on the database's pool, each on its own. */
export const runner = (db: Database): Run => (sql, params = []) =>
  (db.orm.em.getConnection() as ReturnType<SqlEntityManager['getConnection']>).execute(sql, params, 'all');

/**
 * Whether `from` (a table and its condition, as written after `from`) holds a row: one statement, the
 * probe an idle poller runs before any heavier work.
 */
export async function holdsRow(run: Run, from: string, params: unknown[] = []): Promise<boolean> {
  const [row] = await run(`select exists (select 1 from ${from}) as found`, params);
  return row?.found === true;
}

/** Statements in one transaction of the database, committed when `fn` resolves. */
export async function inTransaction<T>(db: Database, fn: (run: Run) => Promise<T>): Promise<T> {
  return (db.orm.em.fork() as SqlEntityManager).transactional(async (tx) => {
    const connection = tx.getConnection();
    const ctx = tx.getTransactionContext();
    return fn((sql, params = []) => connection.execute(sql, params, 'all', ctx));
  });
}
