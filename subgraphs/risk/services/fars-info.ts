import { badInput } from '../../platform/errors.ts';
import type { AreaQuery } from './area.ts';
import { crashPage, decodeCrashCursor } from './crash-page.ts';
import { farsRecord, type FarsRow } from './fars-record.ts';

/** Most records of one page (`limit`/`first`): larger areas are walked with `after`. */
export const MAX_FARS_RECORDS = 1000;

export interface FarsInfoArgs {
  limit?: number | null;
  first?: number | null;
  after?: string | null;
}

/** Fatal crash records of the area (those its filter matches) in the FARS accident.csv layout, codes decoded, most recent first, one page behind `after`. */
export async function farsInfo(q: AreaQuery, { limit, first, after }: FarsInfoArgs = {}) {
  const field = first != null ? 'first' : 'limit';
  const size = first ?? limit ?? 100;
  if (!Number.isInteger(size) || size < 0 || size > MAX_FARS_RECORDS) throw badInput(`${field} must be a whole number from 0 to ${MAX_FARS_RECORDS}`, field);
  const cursor = decodeCrashCursor(after);
  if (!q.cells.length || q.resolution === null) {
    return { total: 0, fatalities: 0, returned: 0, records: [], pageInfo: { hasNextPage: false, endCursor: null }, source: null, sample: false };
  }
  const cells = await q.filteredFigureCells();
  const total = cells.reduce((s, c) => s + c.fatal, 0);
  const fatalities = cells.reduce((s, c) => s + c.fatalities, 0);
  const page = await crashPage(q, size, cursor);
  const rows = JSON.parse(page.rowsJson) as FarsRow[];
  const sources = await q.sources();
  return {
    total, fatalities, returned: rows.length,
    records: rows.map(farsRecord),
    pageInfo: { hasNextPage: page.hasNextPage, endCursor: page.endCursor },
    source: sources.crashes.source,
    sample: sources.crashes.sample,
  };
}
