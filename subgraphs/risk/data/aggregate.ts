import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/core';
import { cellArea } from 'h3-js';
import { bulkInsert } from '../../platform/db/bulk.ts';
import { CrashCell, RESOLUTIONS, TrafficCell, TrafficSensor, type Crash, type Resolution } from '../entities.ts';
import { cellColumn } from '../geometry/cells.ts';
import { coveredStatesKm2, fitModel, forgetRiskModel, REFERENCE_RESOLUTION, scoreArea, weightOf } from './model.ts';
import { forgetDataSources } from './sources.ts';
import { recordDataVersion } from './version.ts';

/** A cell's rate: its weight (see weightOf) per km² per year. */
const cellRate = (fatal: number, fatalities: number, km2: number, years: number) => weightOf(fatal, fatalities) / km2 / years;

const round = (v: number, digits: number) => Math.round(v * 10 ** digits) / 10 ** digits;
const bump = (counts: Record<string, number>, code: number | null | undefined) => {
  const key = String(code ?? 'null');
  counts[key] = (counts[key] ?? 0) + 1;
};

/** One cell's counts and breakdowns, as stored in risk_crash_cells (and computed for a filter at query time). */
export interface CellAggregate {
  fatal: number; injury: number; pdo: number; fatalities: number;
  byYear: Record<string, number[]>; byHourOfWeek: Record<string, number>; byMonth: number[];
  byWeather: Record<string, number>; byLight: Record<string, number>; byRoadClass: Record<string, number>;
}

const CRASH_CELL_COLUMNS = {
  resolution: 'smallint', cell: 'varchar(16)', fatal: 'int', injury: 'int', pdo: 'int', fatalities: 'int', area_km2: 'double precision',
  fatal_rate: 'double precision', fatality_rate: 'double precision', rate: 'double precision', risk_index: 'double precision',
  by_year: 'jsonb', by_hour_of_week: 'jsonb', by_month: 'jsonb', by_weather: 'jsonb', by_light: 'jsonb', by_road_class: 'jsonb',
};
const TRAFFIC_CELL_COLUMNS = { resolution: 'smallint', cell: 'varchar(16)', sensors: 'int', volume_sum: 'jsonb', speed_volume_sum: 'jsonb' };

/**
 * Work between two returns to the event loop during a rebuild. PGlite runs every statement on the
 * event loop, and awaiting one statement after another gives the loop no turn: a first start's
 * rebuild held it for up to 0.9 s.
 */
const CHUNK = 2000;
/** Cells per turn of the loop: each cell's exact area is an H3 computation (~20 µs). */
const CELL_CHUNK = 500;

export type CrashFacts = Pick<Crash, 'severity' | 'fatalities' | 'year' | 'month' | 'hourOfWeek' | 'weather' | 'lightCondition' | 'functionalSystem' | 'h3r5' | 'h3r7' | 'h3r9'>;
/** The select list of CrashFacts. */
export const CRASH_FACTS = `"id", "severity", "fatalities", "year", "month", "hour_of_week" as "hourOfWeek", "weather", "light_condition" as "lightCondition",
  "functional_system" as "functionalSystem", "h3r5", "h3r7", "h3r9"`;

/** Every crash's aggregated facts, read in pages in key order with the event loop given back between them. */
async function crashFacts(em: EntityManager): Promise<CrashFacts[]> {
  const all: CrashFacts[] = [];
  let after = '';
  for (;;) {
    const page: (CrashFacts & { id: string })[] = await em.getConnection().execute(
      `select ${CRASH_FACTS} from "risk"."risk_crashes" where "id" > ? order by "id" limit ?`, [after, CHUNK], 'all', em.getTransactionContext());
    all.push(...page);
    await yieldToLoop();
    if (page.length < CHUNK) return all;
    after = page[page.length - 1].id;
  }
}

export const emptyAggregate = (): CellAggregate => ({
  fatal: 0, injury: 0, pdo: 0, fatalities: 0, byYear: {}, byHourOfWeek: {}, byMonth: new Array(12).fill(0), byWeather: {}, byLight: {}, byRoadClass: {},
});

/** Counts one crash into its cell's aggregate. */
export function addCrash(a: CellAggregate, c: Omit<CrashFacts, 'h3r5' | 'h3r7' | 'h3r9'>) {
  a[c.severity]++;
  a.fatalities += c.fatalities;
  const y = (a.byYear[c.year] ??= [0, 0, 0, 0]);
  y[c.severity === 'fatal' ? 0 : c.severity === 'injury' ? 1 : 2]++;
  y[3] += c.fatalities;
  if (c.hourOfWeek !== null && c.hourOfWeek !== undefined) bump(a.byHourOfWeek, c.hourOfWeek);
  a.byMonth[c.month - 1]++;
  bump(a.byWeather, c.weather);
  bump(a.byLight, c.lightCondition);
  bump(a.byRoadClass, c.functionalSystem);
}

/** Statistics the planner uses (PGlite runs no autovacuum), for the columns queries filter and sort on only. */
const ANALYZED: Record<string, string[]> = {
  risk_crashes: ['source', 'severity', 'year', 'month', 'day', 'hour', 'case_number', 'h3r5', 'h3r7', 'h3r9'],
  risk_crash_cells: ['resolution', 'cell', 'rate'],
  risk_traffic_cells: ['resolution', 'cell'],
  risk_traffic_sensors: ['source', 'h3r5', 'h3r7', 'h3r9'],
};

/** The calendar years the crash data span (at least 1). */
export const yearSpan = (years: Iterable<number>) => {
  const list = [...years];
  return list.length ? Math.max(...list) - Math.min(...list) + 1 : 1;
};

/**
 * Rebuilds the per-(resolution, cell) aggregates from the crash and station tables: counts by
 * severity, year, hour of week, month, weather, light and road class, the rates and the 0-100
 * index; and the traffic profiles. Run once after a load, not at every start.
 */
export async function rebuildAggregates(em: EntityManager): Promise<{ crashCells: number; trafficCells: number }> {
  const crashes = await crashFacts(em);
  const sensors = await em.find(TrafficSensor, {}, { disableIdentityMap: true });
  const years = [...new Set(crashes.map((c) => c.year))];
  const span = yearSpan(years);
  const rated: { res: Resolution; cell: string; a: CellAggregate; km2: number; rate: number }[] = [];
  const trafficRows: Record<string, unknown>[] = [];
  for (const res of RESOLUTIONS) {
    const column = cellColumn(res as Resolution);
    const traffic = new Map<string, { sensors: number; volumeSum: number[]; speedVolumeSum: number[] }>();
    for (const s of sensors) {
      const cell = s[column];
      let t = traffic.get(cell);
      if (!t) traffic.set(cell, t = { sensors: 0, volumeSum: new Array(168).fill(0), speedVolumeSum: new Array(168).fill(0) });
      t.sensors++;
      for (let h = 0; h < 168; h++) {
        t.volumeSum[h] += s.volume[h];
        t.speedVolumeSum[h] += s.volume[h] * s.speed[h];
      }
    }
    const cells = new Map<string, CellAggregate>();
    for (const [i, c] of crashes.entries()) {
      if (i % CHUNK === CHUNK - 1) await yieldToLoop();
      const cell = c[column];
      let a = cells.get(cell);
      if (!a) cells.set(cell, a = emptyAggregate());
      addCrash(a, c);
    }
    for (const [cell, a] of cells) {
      if (rated.length % CELL_CHUNK === CELL_CHUNK - 1) await yieldToLoop();
      const km2 = cellArea(cell, 'km2');
      rated.push({ res: res as Resolution, cell, a, km2, rate: cellRate(a.fatal, a.fatalities, km2, span) });
    }
    for (const [cell, t] of traffic) {
      trafficRows.push({ resolution: res, cell, sensors: t.sensors, volume_sum: t.volumeSum, speed_volume_sum: t.speedVolumeSum.map((v) => Math.round(v)) });
    }
  }
  // Every cell's index from the one model, fitted on the reference resolution's cells (as riskModel does from the stored rows).
  const reference = rated.filter((r) => r.res === REFERENCE_RESOLUTION && r.a.fatal > 0);
  const model = fitModel({
    weight: reference.reduce((s, r) => s + weightOf(r.a.fatal, r.a.fatalities), 0),
    rateSquares: reference.reduce((s, r) => s + r.rate ** 2, 0),
    medianRate: medianOf(reference.map((r) => r.rate)),
  }, coveredStatesKm2(), years.length ? Math.min(...years) : null, years.length ? Math.max(...years) : null);
  const crashRows = rated.map(({ res, cell, a, km2, rate }) => ({
    resolution: res, cell, fatal: a.fatal, injury: a.injury, pdo: a.pdo, fatalities: a.fatalities, area_km2: round(km2, 6),
    fatal_rate: a.fatal / km2 / span, fatality_rate: a.fatalities / km2 / span, rate,
    risk_index: scoreArea(model, weightOf(a.fatal, a.fatalities), km2).index,
    by_year: a.byYear, by_hour_of_week: a.byHourOfWeek, by_month: a.byMonth, by_weather: a.byWeather, by_light: a.byLight, by_road_class: a.byRoadClass,
  }));
  await em.transactional(async (tx) => {
    await tx.nativeDelete(CrashCell, {});
    await tx.nativeDelete(TrafficCell, {});
    // Rows with JSON breakdowns cost the database more: smaller statements keep each hold of the loop short.
    await bulkInsert(tx, { schema: 'risk', name: 'risk_crash_cells' }, CRASH_CELL_COLUMNS, crashRows, { rowsPerStatement: 150 });
    await bulkInsert(tx, { schema: 'risk', name: 'risk_traffic_cells' }, TRAFFIC_CELL_COLUMNS, trafficRows, { rowsPerStatement: 50 });
    await recordDataVersion(tx);
  });
  // Fresh statistics after a bulk load (PGlite runs no autovacuum), so the planner uses the indexes.
  for (const [table, columns] of Object.entries(ANALYZED)) {
    await em.getConnection().execute(`analyze "risk"."${table}" (${columns.map((c) => `"${c}"`).join(', ')})`);
    await yieldToLoop();
  }
  forgetRiskModel(em);
  forgetDataSources(em);
  return { crashCells: crashRows.length, trafficCells: trafficRows.length };
}

/** The lower median, as percentile_disc(0.5). */
function medianOf(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted.length ? sorted[Math.ceil(sorted.length / 2) - 1] : 0;
}
