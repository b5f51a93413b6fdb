import { addCrash, emptyAggregate, type CellAggregate, type CrashFacts } from '../data/aggregate.ts';
import type { RiskModel } from '../data/model.ts';
import type { CrashCell, Resolution } from '../entities.ts';
import { tooComplex } from '../geometry/budget.ts';
import { cellColumn } from '../geometry/cells.ts';
import type { CellFigureRow } from '../services/cell-figures.ts';
import { readRows } from '../services/read.ts';
import { crashFilterSql } from './apply.ts';
import type { CrashFilter } from './crash-filter.ts';

/**
 * Most crash rows one filtered evaluation reads: the crashes of its cells, known from the stored
 * aggregates before any row is read (a whole covered state holds some 9,000 fatal crashes of 2013-2015).
 */
export const MAX_FILTERED_CRASHES = 250_000;

/** What a filtered evaluation needs of its area (services/area.ts AreaQuery). */
export interface FilterScope {
  em: Parameters<typeof readRows>[0];
  filter: CrashFilter;
  resolution: Resolution;
  /** The stored (unfiltered) rows of the area's cells with a crash. */
  stored: CellFigureRow[];
}

type FactRow = [cell: string, severity: CrashFacts['severity'], fatalities: number, year: number, month: number, hourOfWeek: number | null,
  weather: number | null, lightCondition: number | null, functionalSystem: number | null];

/** Years the per-year rates of a filter are over: the filter's years within the data's, else the data's. */
export function filteredYears(model: Pick<RiskModel, 'years' | 'firstYear' | 'lastYear'>, filter: CrashFilter | null): number {
  if (!filter?.years || model.firstYear === null || model.lastYear === null) return model.years;
  return Math.max(1, filter.years.filter((y) => y >= model.firstYear! && y <= model.lastYear!).length);
}

/** Refuses (422, limit `crashes`) an evaluation that would read more crash rows than MAX_FILTERED_CRASHES, before it reads any. */
export function checkFilterCost(stored: Pick<CellFigureRow, 'fatal' | 'injury' | 'pdo'>[], max = MAX_FILTERED_CRASHES) {
  const crashes = stored.reduce((s, c) => s + c.fatal + c.injury + c.pdo, 0);
  if (crashes > max) throw tooComplex('crashes', max, crashes);
}

/**
 * The area's cells counted over the crashes the filter matches, as risk_crash_cells rows (breakdowns
 * included, cells without a matching crash left out). Each keeps its stored area and its unfiltered
 * index: a filtered index would need its own reference. Rates are per km² per filteredYears.
 */
export async function filteredCells(scope: FilterScope, years: number): Promise<CrashCell[]> {
  const withCrashes = scope.stored.filter((c) => c.fatal + c.injury + c.pdo > 0);
  checkFilterCost(withCrashes);
  if (!withCrashes.length) return [];
  const column = cellColumn(scope.resolution);
  const where = crashFilterSql(scope.filter);
  const [row] = await readRows<{ rows: string }>(scope.em,
    `select coalesce(json_agg(json_build_array("${column}", "severity", "fatalities", "year", "month", "hour_of_week", "weather", "light_condition",
       "functional_system")), '[]')::text as "rows"
     from "risk"."risk_crashes" where "${column}" = any(?::text[])${where.sql}`,
    [`{${withCrashes.map((c) => c.cell).join(',')}}`, ...where.params]);
  const cells = new Map<string, CellAggregate>();
  for (const [cell, severity, fatalities, year, month, hourOfWeek, weather, lightCondition, functionalSystem] of JSON.parse(row.rows) as FactRow[]) {
    let a = cells.get(cell);
    if (!a) cells.set(cell, a = emptyAggregate());
    addCrash(a, { severity, fatalities, year, month, hourOfWeek, weather, lightCondition, functionalSystem });
  }
  const stored = new Map(withCrashes.map((c) => [c.cell, c]));
  return [...cells].map(([cell, a]) => {
    const { areaKm2, riskIndex } = stored.get(cell)!;
    const fatalRate = a.fatal / areaKm2 / years, fatalityRate = a.fatalities / areaKm2 / years;
    return {
      resolution: scope.resolution, cell, fatal: a.fatal, injury: a.injury, pdo: a.pdo, fatalities: a.fatalities, areaKm2,
      fatalRate, fatalityRate, rate: (fatalRate + fatalityRate) / 2, riskIndex,
      byYear: a.byYear, byHourOfWeek: a.byHourOfWeek, byMonth: a.byMonth, byWeather: a.byWeather, byLight: a.byLight, byRoadClass: a.byRoadClass,
    } as CrashCell;
  });
}
