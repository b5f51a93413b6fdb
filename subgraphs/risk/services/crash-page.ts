import { decodeCursor, encodeCursor } from '../../platform/cursor.ts';
import { cellColumn } from '../geometry/cells.ts';
import { cellArray, selectList, type AreaQuery } from './area.ts';
import { FARS_ROW_COLUMNS } from './fars-record.ts';
import { readRows } from './read.ts';
import { crashFilterSql } from '../filter/apply.ts';

/**
 * Where a fatal crash stands in the order "most recent first": year, month, day, hour (99 unknown)
 * descending, then case number ascending; the row id makes the order total.
 */
type CrashKeys = [year: number, month: number, day: number, hour: number, caseNumber: number, id: string];

const readKeys = (keys: unknown[]): CrashKeys | null =>
  keys.length === 6 && keys.slice(0, 5).every((k) => Number.isSafeInteger(k)) && typeof keys[5] === 'string' && keys[5].length <= 40 && !keys[5].includes('\u0000')
    ? keys as CrashKeys : null;

/** A cursor of crashPage (`after`, or the exports' `after` query parameter): anything else is a 400 naming `field`. */
export const decodeCrashCursor = (value: string | null | undefined, field = 'after') => decodeCursor(value, readKeys, field);

export interface CrashPage {
  /** The page's rows (FarsRow and a few more columns), as one JSON array text, most recent first. */
  rowsJson: string;
  hasNextPage: boolean;
  /** The cursor of the page's last crash; null for an empty page. */
  endCursor: string | null;
}

const SELECT = `${selectList(FARS_ROW_COLUMNS)}, "id", coalesce("hour", 99) as "hour99"`;
const ORDER = '"year" desc, "month" desc, "day" desc, coalesce("hour", 99) desc, "case_number" asc, "id" desc';
// Negating the case number turns the one ascending key into a descending one, so a single row comparison says "after".
const AFTER = '("year", "month", "day", coalesce("hour", 99), -"case_number", "id") < (?, ?, ?, ?, ?, ?)';
const EMPTY: CrashPage = { rowsJson: '[]', hasNextPage: false, endCursor: null };

/**
 * One page of the area's fatal crashes (those its filter matches) behind `after`, keyset-paged: `first` rows, and whether more
 * follow, in one statement (`first + 1` rows read). The rows come back as one JSON text (PGlite decodes
 * a result field by field in JavaScript), to be parsed by whoever shapes them: farsInfo on the event
 * loop, the exports in the geometry workers.
 */
export async function crashPage(q: AreaQuery, first: number, after: CrashKeys | null): Promise<CrashPage> {
  if (q.resolution === null || !q.cells.length) return EMPTY;
  // Only the cells holding a fatal crash (that the filter matches) are named: a shorter list is planned in a third of the time.
  const withCrashes = (await q.filteredFigureCells()).filter((c) => c.fatal > 0).map((c) => c.cell);
  if (!withCrashes.length) return EMPTY;
  const where = crashFilterSql(q.filter);
  const [row] = await readRows<{ rows: string; last: string | null; fetched: number }>(q.em,
    `select coalesce(json_agg(t order by t."n") filter (where t."n" <= ?), '[]')::text as "rows",
       max(case when t."n" = ? then json_build_array(t."year", t."month", t."day", t."hour99", t."caseNumber", t."id")::text end) as "last",
       count(*)::int as "fetched"
     from (select ${SELECT}, row_number() over (order by ${ORDER}) as "n" from "risk"."risk_crashes"
       where "severity" = 'fatal' and "${cellColumn(q.resolution)}" = any(?::text[])${where.sql}${after ? ` and ${AFTER}` : ''}
       order by ${ORDER} limit ?) t`,
    [first, first, cellArray(withCrashes), ...where.params, ...(after ? [...after.slice(0, 4), -after[4], after[5]] : []), first + 1]);
  return { rowsJson: row.rows, hasNextPage: row.fetched > first, endCursor: row.last ? encodeCursor(JSON.parse(row.last) as CrashKeys) : null };
}
