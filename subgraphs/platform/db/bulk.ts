import { setImmediate } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/core';

/**
 * Rows per statement. PGlite runs each statement on the event loop, so a batch is also the longest
 * the loop is held; between batches it is given back (setImmediate) to the requests waiting.
 */
export const BULK_ROWS = 500;

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

export interface BulkInsertOptions {
  /** On a conflict on these columns, update the other columns (an upsert); without, plain inserts. */
  conflict?: string[];
  rowsPerStatement?: number;
}

/**
 * Inserts plain rows (column name → value) in batches, each batch one statement whose rows travel as
 * a single JSON parameter expanded by `jsonb_to_recordset`: the database parses one value instead of
 * thousands of literals, and the ORM does no per-entity work. `columns` maps each column to its SQL
 * type. Returns the rows written.
 */
export async function bulkInsert(em: EntityManager, table: { schema: string; name: string }, columns: Record<string, string>, rows: Record<string, unknown>[], options: BulkInsertOptions = {}): Promise<number> {
  const size = options.rowsPerStatement ?? BULK_ROWS;
  const names = Object.keys(columns);
  const list = names.map(ident).join(', ');
  const conflict = options.conflict?.length
    ? ` on conflict (${options.conflict.map(ident).join(', ')}) do update set ${names.filter((c) => !options.conflict!.includes(c)).map((c) => `${ident(c)} = excluded.${ident(c)}`).join(', ')}`
    : '';
  const sql = `insert into ${ident(table.schema)}.${ident(table.name)} (${list}) select ${list} from jsonb_to_recordset(?::jsonb) as r(${names.map((c) => `${ident(c)} ${columns[c]}`).join(', ')})${conflict}`;
  const connection = em.getConnection();
  for (let i = 0; i < rows.length; i += size) {
    await connection.execute(sql, [JSON.stringify(rows.slice(i, i + size))], 'run', em.getTransactionContext());
    await setImmediate();
  }
  return rows.length;
}
