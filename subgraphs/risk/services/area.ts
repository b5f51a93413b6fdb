import type { EntityManager } from '@mikro-orm/core';
import { badInput } from '../../platform/errors.ts';
import { riskDataStatus } from '../data/load.ts';
import { dataSources, type DataSources } from '../data/sources.ts';
import type { CrashCell, Resolution, TrafficCell } from '../entities.ts';
import { MAX_CELLS } from '../geometry/cells.ts';
import type { Coverage } from '../geometry/coverage.ts';
import { areaPoolFor } from '../geometry/pool.ts';
import type { SearchArea } from '../geometry/wkt.ts';

export const QUERY_METHODS = ['ContainsBuffer'] as const;

/** A resolved search area: validated, clipped to coverage, and its H3 cells chosen. Built once per request. */
export interface AreaQuery {
  em: EntityManager;
  search: SearchArea;
  coverage: Coverage;
  queryMethod: string;
  /** Null when nothing of the area is covered. */
  resolution: Resolution | null;
  cells: string[];
  timeZone: string | null;
  /** Memoised loads shared by the data sets of one report. */
  /** The area's crash cells: counts, rates, index and breakdowns, loaded once for every data set of the report. */
  crashCells(): Promise<CrashCell[]>;
  trafficCells(): Promise<TrafficCell[]>;
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
const H3_INDEX = /^[0-9a-f]{15}$/;

/**
 * The aggregate rows of a set of cells at one resolution, by primary key. The cells travel as one
 * text[] parameter (`cell = any(...)`) rather than thousands of IN parameters.
 */
async function cellRows<T>(em: EntityManager, table: string, columns: string[], resolution: Resolution, cells: string[]): Promise<T[]> {
  if (!cells.every((c) => H3_INDEX.test(c))) throw new Error('invalid H3 cell index');
  const rows: Record<string, unknown>[] = await em.getConnection().execute(
    `select ${columns.map((c) => `"${c}"`).join(', ')} from "risk"."${table}" where "resolution" = ? and "cell" = any(?::text[])`,
    [resolution, `{${cells.join(',')}}`]);
  return rows.map((row) => Object.fromEntries(columns.map((c) => [camel(c), row[c]])) as T);
}

/**
 * Parses and validates the search area and picks its cells, in the geometry workers: every 400 and
 * 422 is raised here, before any data set.
 */
export async function resolveArea(em: EntityManager, wkt: string, radius?: number | null, queryMethod?: string | null, maxCells = MAX_CELLS): Promise<AreaQuery> {
  const method = queryMethod == null || queryMethod.trim() === '' ? 'ContainsBuffer'
    : QUERY_METHODS.find((m) => m.toLowerCase() === queryMethod.trim().toLowerCase());
  if (!method) throw badInput(`queryMethod must be one of ${QUERY_METHODS.join(', ')}`, 'queryMethod');
  const { search, coverage, resolution, cells } = await areaPoolFor(em).resolve(wkt, radius, maxCells);
  return {
    em, search, coverage, queryMethod: method, resolution, cells,
    timeZone: coverage.parts[0]?.state.timeZone ?? null,
    crashCells: memo(async () => (cells.length ? cellRows<CrashCell>(em, 'risk_crash_cells', CRASH_CELL_COLUMNS, resolution!, cells) : [])),
    trafficCells: memo(async () => (cells.length ? cellRows<TrafficCell>(em, 'risk_traffic_cells', TRAFFIC_CELL_COLUMNS, resolution!, cells) : [])),
    sources: memo(() => dataSources(em)),
  };
}

/** The area as the report describes it. */
export function describeArea(q: AreaQuery) {
  return {
    geometryType: q.search.geometry.type.toUpperCase(),
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
