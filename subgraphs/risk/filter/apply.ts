import type { Crash } from '../entities.ts';
import { codesOf, RURAL_URBAN_VALUES, type CrashFilter, type ListField } from './crash-filter.ts';

/** What a filter reads of a crash (columns of risk_crashes). */
export type FilteredFacts = Pick<Crash, 'year' | 'month' | 'day' | 'hour' | 'lightCondition' | 'weather' | 'functionalSystem' | 'ruralUrban'
  | 'drunkDrivers' | 'peds' | 'fatalities'>;

/** FARS DAY_WEEK of a date: 1 = Sunday ... 7 = Saturday. */
export const dayOfWeek = (year: number, month: number, day: number) => new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 1;

/** Each list filter's column (an expression for the day of week, which the date gives), and how a crash's value is read. */
const LIST_COLUMNS: Record<ListField, { sql: string; of: (c: FilteredFacts) => number | null | undefined; names?: true }> = {
  years: { sql: '"year"', of: (c) => c.year },
  months: { sql: '"month"', of: (c) => c.month },
  daysOfWeek: { sql: '(extract(dow from make_date("year", "month", "day"))::int + 1)', of: (c) => dayOfWeek(c.year, c.month, c.day) },
  hours: { sql: '"hour"', of: (c) => c.hour },
  lightConditions: { sql: '"light_condition"', of: (c) => c.lightCondition, names: true },
  weather: { sql: '"weather"', of: (c) => c.weather, names: true },
  functionClasses: { sql: '"functional_system"', of: (c) => c.functionalSystem, names: true },
};

const codes = (field: ListField, values: number[] | string[]) =>
  LIST_COLUMNS[field].names ? codesOf(field, values as string[]) : values as number[];

/** Whether a count is over 0 (true) or 0 (false); an unknown count matches neither. */
const some = (count: number | null | undefined, wanted: boolean) => count != null && (count > 0) === wanted;

/**
 * The filter as SQL conditions on risk_crashes, each beginning with ` and ` ('' for none), and their
 * parameters (lists as one int[] each). A crash whose filtered field is unknown matches no value of it.
 */
export function crashFilterSql(filter: CrashFilter | null): { sql: string; params: unknown[] } {
  if (!filter) return { sql: '', params: [] };
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const field of Object.keys(LIST_COLUMNS) as ListField[]) {
    const values = filter[field];
    if (!values) continue;
    parts.push(`${LIST_COLUMNS[field].sql} = any(?::int[])`);
    params.push(`{${codes(field, values).join(',')}}`);
  }
  if (filter.ruralUrban) {
    parts.push('"rural_urban" = ?');
    params.push(RURAL_URBAN_VALUES[filter.ruralUrban]);
  }
  if (filter.drunkDriver !== undefined) parts.push(`"drunk_drivers" ${filter.drunkDriver ? '> 0' : '= 0'}`);
  if (filter.pedestrians !== undefined) parts.push(`"peds" ${filter.pedestrians ? '> 0' : '= 0'}`);
  if (filter.minFatalities !== undefined) {
    parts.push('"fatalities" >= ?');
    params.push(filter.minFatalities);
  }
  return { sql: parts.map((p) => ` and ${p}`).join(''), params };
}

/** The same test as crashFilterSql, on a crash in memory. */
export function matchesCrashFilter(filter: CrashFilter | null, crash: FilteredFacts): boolean {
  if (!filter) return true;
  for (const field of Object.keys(LIST_COLUMNS) as ListField[]) {
    const values = filter[field];
    if (values && !codes(field, values).includes(LIST_COLUMNS[field].of(crash) ?? NaN)) return false;
  }
  if (filter.ruralUrban && crash.ruralUrban !== RURAL_URBAN_VALUES[filter.ruralUrban]) return false;
  if (filter.drunkDriver !== undefined && !some(crash.drunkDrivers, filter.drunkDriver)) return false;
  if (filter.pedestrians !== undefined && !some(crash.peds, filter.pedestrians)) return false;
  return filter.minFatalities === undefined || crash.fatalities >= filter.minFatalities;
}
