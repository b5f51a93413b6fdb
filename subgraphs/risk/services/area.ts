import type { EntityManager } from '@mikro-orm/core';
import { badInput } from '../../platform/errors.ts';
import { riskAreaKey } from '../area-key.ts';
import { riskDataStatus } from '../data/status.ts';
import { dataSources, type DataSources } from '../data/sources.ts';
import { RESOLUTIONS, type CrashCell, type Resolution, type TrafficCell } from '../entities.ts';
import { crashFilterKey, type CrashFilter } from '../filter/crash-filter.ts';
import { filteredCells, filteredYears } from '../filter/filtered-cells.ts';
import { riskModel } from '../data/model.ts';
import { MAX_CELLS } from '../geometry/cells.ts';
import type { ResolvedArea } from '../geometry/area-task.ts';
import { areaPoolFor, type AreaPool } from '../geometry/pool.ts';
import type { CellFigureRow } from './cell-figures.ts';
import { readRows } from './read.ts';

export const QUERY_METHODS = ['ContainsBuffer'] as const;

/** A resolved search area: validated, clipped to coverage, and its H3 cells chosen. Built once per request. */
export interface AreaQuery {
  em: EntityManager;
  /** The geometry workers its tasks run in: the interactive ones, or batch scoring's own (batch/runner.ts). */
  pool: AreaPool;
  /** The area as requested (the map's worker derives its outline from it again), and the resolution asked (null: automatic). */
  request: { wkt: string; radius: number | null | undefined; resolution: Resolution | null };
  /** The same for every spelling of this area with this cell bound, resolution asked, method and filter: the answer cache's key. */
  key: string;
  /** The crash filter (filter/crash-filter.ts); null: every crash. */
  filter: CrashFilter | null;
  search: ResolvedArea['search'];
  coverage: ResolvedArea['coverage'];
  queryMethod: string;
  /** Null when nothing of the area is covered. */
  resolution: Resolution | null;
  cells: string[];
  timeZone: string | null;
  /** Memoised loads shared by the data sets of one report. */
  /** The area's crash cells: counts, rates, index and breakdowns, loaded once for every data set of the report. */
  crashCells(): Promise<CrashCell[]>;
  /** The same cells' counts, rates and index without the breakdowns (what the exports need), or crashCells' when already loaded. */
  figureCells(): Promise<CellFigureRow[]>;
  trafficCells(): Promise<TrafficCell[]>;
  /** crashCells counted over the filter's crashes (their stored index kept), only the cells with one; crashCells without a filter. */
  filteredCells(): Promise<CrashCell[]>;
  /** figureCells' counterpart of filteredCells. */
  filteredFigureCells(): Promise<CellFigureRow[]>;
  /** Years the per-year figures are over (the filter's years within the data's, else the data's). */
  years(): Promise<number>;
  /** What the stored data are (real or sample, source, years). */
  sources(): Promise<DataSources>;
}

const round = (v: number, digits = 3) => Math.round(v * 10 ** digits) / 10 ** digits;

function memo<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | null = null;
  return () => (p ??= fn());
}

const CRASH_CELL_COLUMNS = ['resolution', 'cell', 'fatal', 'injury', 'pdo', 'fatalities', 'area_km2', 'fatal_rate', 'fatality_rate', 'rate', 'risk_index',
  'by_year', 'by_hour_of_week', 'by_month', 'by_weather', 'by_light', 'by_road_class'];
const TRAFFIC_CELL_COLUMNS = ['resolution', 'cell', 'sensors', 'volume_sum', 'speed_volume_sum'];
const camel = (column: string) => column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
/** The select list, each column named as its property (the rows need no renaming in JS). */
export const selectList = (columns: string[]) => columns.map((c) => `"${c}" as "${camel(c)}"`).join(', ');
const CRASH_CELL_SELECT = selectList(CRASH_CELL_COLUMNS);
const TRAFFIC_CELL_SELECT = selectList(TRAFFIC_CELL_COLUMNS);
const FIGURE_CELL_SELECT = selectList(['resolution', 'cell', 'fatal', 'injury', 'pdo', 'fatalities', 'area_km2', 'fatal_rate', 'fatality_rate', 'risk_index']);
const H3_INDEX = /^[0-9a-f]{15}$/;

/** A set of H3 cells as one text[] parameter (`= any(?::text[])`), rather than thousands of IN parameters. */
export function cellArray(cells: string[]): string {
  for (const c of cells) if (!H3_INDEX.test(c)) throw new Error('invalid H3 cell index');
  return `{${cells.join(',')}}`;
}

/**
 * The aggregate rows of a set of cells at one resolution, by primary key, as one JSON text parsed once:
 * PGlite decodes a result field by field in JavaScript, which costs twice as much for a thousand rows
 * with six JSON columns each.
 */
async function cellRows<T>(em: EntityManager, table: string, select: string, resolution: Resolution, cells: string[]): Promise<T[]> {
  const [row] = await readRows<{ rows: string }>(em, 
    `select coalesce(json_agg(t), '[]')::text as "rows" from (select ${select} from "risk"."${table}" where "resolution" = ? and "cell" = any(?::text[])) t`,
    [resolution, cellArray(cells)]);
  return JSON.parse(row.rows) as T[];
}

/**
 * The H3 resolution a caller asks for (`resolution`: 5, 7 or 9), or null (absent): the finest within
 * MAX_CELLS cells, as the Risk Index chooses. Anything else is BAD_USER_INPUT naming `resolution`.
 */
export function parseResolution(value: unknown): Resolution | null {
  if (value === null || value === undefined) return null;
  const found = RESOLUTIONS.find((r) => r === value);
  if (found === undefined) throw badInput(`resolution must be one of ${RESOLUTIONS.join(', ')} (or left out: chosen for the area); got ${JSON.stringify(value)}`, 'resolution');
  return found;
}

/**
 * Parses and validates the search area and picks its cells, in the geometry workers: every 400 and
 * 422 is raised here, before any data set.
 */
export async function resolveArea(
  em: EntityManager, wkt: string, radius?: number | null, queryMethod?: string | null, filter: CrashFilter | null = null,
  resolution: unknown = null, maxCells = MAX_CELLS, pool: AreaPool = areaPoolFor(em),
): Promise<AreaQuery> {
  const asked = parseResolution(resolution);
  const method = queryMethod == null || queryMethod.trim() === '' ? 'ContainsBuffer'
    : QUERY_METHODS.find((m) => m.toLowerCase() === queryMethod.trim().toLowerCase());
  if (!method) throw badInput(`queryMethod must be one of ${QUERY_METHODS.join(', ')}`, 'queryMethod');
  const resolved = await pool.resolve(wkt, radius, maxCells, asked);
  const { search, coverage, cells } = resolved;
  const chosen = resolved.resolution;
  let loaded = false;
  const crashCells = memo(async () => {
    loaded = true;
    return cells.length ? cellRows<CrashCell>(em, 'risk_crash_cells', CRASH_CELL_SELECT, chosen!, cells) : [];
  });
  const figureCells = memo(async () => (loaded ? crashCells() : cells.length ? cellRows<CellFigureRow>(em, 'risk_crash_cells', FIGURE_CELL_SELECT, chosen!, cells) : []));
  const years = memo(async () => filteredYears(await riskModel(em), filter));
  const filtered = memo(async () => (filter && chosen !== null
    ? filteredCells({ em, filter, resolution: chosen, stored: await figureCells() }, await years()) : crashCells()));
  return {
    em, pool, request: { wkt, radius, resolution: asked }, key: `${riskAreaKey(wkt, radius)}|${maxCells}|${asked ?? 'auto'}|${chosen}|${method}|${crashFilterKey(filter)}`,
    filter, search, coverage, queryMethod: method, resolution: chosen, cells,
    timeZone: coverage.parts[0]?.state.timeZone ?? null,
    crashCells,
    figureCells,
    trafficCells: memo(async () => (cells.length ? cellRows<TrafficCell>(em, 'risk_traffic_cells', TRAFFIC_CELL_SELECT, chosen!, cells) : [])),
    filteredCells: filtered,
    filteredFigureCells: filter ? filtered : figureCells,
    years,
    sources: memo(() => dataSources(em)),
  };
}

/** The area as the report describes it. */
export function describeArea(q: AreaQuery) {
  return {
    geometryType: q.search.geometryType.toUpperCase(),
    radius: q.search.radius,
    queryMethod: q.queryMethod,
    areaKm2: round(q.coverage.requestedKm2),
    coveredKm2: round(q.coverage.coveredKm2),
    coveredFraction: round(q.coverage.coveredFraction, 4),
    coverage: q.coverage.status,
    outsideCoverage: q.coverage.status === 'OUTSIDE',
    message: riskDataStatus(q.em) === 'loading'
      ? `${q.coverage.message} The crash data are still loading (first start): figures are incomplete until dataStatus is READY.`
      : q.coverage.message,
    states: q.coverage.parts.map((p) => p.state.code),
    resolution: q.resolution,
    cellsTouched: q.cells.length,
    dataStatus: riskDataStatus(q.em).toUpperCase(),
  };
}
