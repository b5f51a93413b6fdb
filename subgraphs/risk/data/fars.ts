import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { EntityManager } from '@mikro-orm/core';
import { Crash } from '../entities.ts';
import { cellsOf } from '../geometry/cells.ts';
import { COVERED_STATES, stateAt } from '../geometry/coverage.ts';
import { FUNCTIONAL_SYSTEM, hourOfWeek, LIGHT_CONDITION, WEATHER } from './codes.ts';
import { insertInBatches } from './load.ts';

/** Columns of the NHTSA FARS accident.csv layout that ingestion needs (others are ignored). */
export const FARS_REQUIRED = ['ST_CASE', 'STATE', 'YEAR', 'MONTH', 'DAY', 'HOUR', 'MINUTE', 'LATITUDE', 'LONGITUD', 'FATALS'] as const;

export interface FarsSummary {
  read: number;
  loaded: number;
  skipped: { outsideCoverage: number; noLocation: number; invalid: number };
}

const COVERED_FIPS = new Set<number>(COVERED_STATES.map((s) => s.fips));

const int = (v: string | undefined): number | null => {
  if (v === undefined || v.trim() === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? Math.trunc(n) : null;
};

/** A FARS code and its label (the file's *NAME column when present, else the manual's table). */
function coded(row: Record<string, string>, column: string, table: Record<number, string>) {
  const code = int(row[column]);
  const name = row[`${column}NAME`]?.trim() || (code !== null ? table[code] : undefined) || null;
  return { code, name: name ? name.slice(0, 80) : null };
}

export type FarsRowResult = { crash: Crash } | { skip: keyof FarsSummary['skipped'] };

/** One accident.csv record as a crash row, or why it is skipped. */
export function farsRow(row: Record<string, string>): FarsRowResult {
  const [stCase, state, year, month, day, fatals] = ['ST_CASE', 'STATE', 'YEAR', 'MONTH', 'DAY', 'FATALS'].map((c) => int(row[c]));
  if (stCase === null || state === null || year === null || month === null || day === null || month < 1 || month > 12 || day < 1 || day > 31) return { skip: 'invalid' };
  if (!COVERED_FIPS.has(state)) return { skip: 'outsideCoverage' };
  const lat = Number(row.LATITUDE);
  const lon = Number(row.LONGITUD);
  // FARS codes unknown positions as 77.7777/88.8888/99.9999 (latitude) and 777.7777/888.8888/999.9999 (longitude).
  if (!Number.isFinite(lat) || !Number.isFinite(lon) || Math.abs(lat) > 90 || Math.abs(lon) > 180 || (lat === 0 && lon === 0)) return { skip: 'noLocation' };
  if (!stateAt(lon, lat)) return { skip: 'outsideCoverage' };
  const rawHour = int(row.HOUR);
  const rawMinute = int(row.MINUTE);
  const hour = rawHour !== null && rawHour >= 0 && rawHour <= 23 ? rawHour : null;
  const minute = rawMinute !== null && rawMinute >= 0 && rawMinute <= 59 ? rawMinute : null;
  const weather = coded(row, 'WEATHER', WEATHER);
  const light = coded(row, 'LGT_COND', LIGHT_CONDITION);
  const func = coded(row, 'FUNC_SYS', FUNCTIONAL_SYSTEM);
  return {
    crash: {
      id: `fars-${year}-${stCase}`, source: 'fars', caseNumber: stCase, state, year, month, day, hour, minute,
      hourOfWeek: hourOfWeek(year, month, day, hour), latitude: lat, longitude: lon, severity: 'fatal',
      fatalities: Math.max(1, fatals ?? 1), persons: int(row.PERSONS), vehicles: int(row.VE_TOTAL),
      county: int(row.COUNTY), city: int(row.CITY),
      weather: weather.code, weatherName: weather.name, lightCondition: light.code, lightConditionName: light.name,
      functionalSystem: func.code, functionalSystemName: func.name, ...cellsOf(lat, lon),
    } as Crash,
  };
}

/**
 * Streams a FARS accident.csv (any year's layout that has the required columns; a UTF-8 BOM is fine)
 * into the crash table. Rows outside California and Illinois or without a position are skipped.
 * Re-ingesting a file updates the same cases. The caller rebuilds the aggregates afterwards.
 */
export async function ingestFars(em: EntityManager, input: Readable, onProgress?: (s: FarsSummary) => void): Promise<FarsSummary> {
  const summary: FarsSummary = { read: 0, loaded: 0, skipped: { outsideCoverage: 0, noLocation: 0, invalid: 0 } };
  const parser = input.pipe(parse({
    bom: true, skip_empty_lines: true, relax_column_count: true, trim: true,
    columns: (header: string[]) => {
      const columns = header.map((h) => h.trim().toUpperCase());
      const missing = FARS_REQUIRED.filter((c) => !columns.includes(c));
      if (missing.length) throw new Error(`not a FARS accident.csv: missing column(s) ${missing.join(', ')}`);
      return columns;
    },
  }));
  let batch: Crash[] = [];
  const flush = async () => {
    if (!batch.length) return;
    await insertInBatches(em, Crash, batch, true);
    summary.loaded += batch.length;
    batch = [];
  };
  for await (const record of parser as AsyncIterable<Record<string, string>>) {
    summary.read++;
    const result = farsRow(record);
    if ('skip' in result) summary.skipped[result.skip]++;
    else batch.push(result.crash);
    if (batch.length >= 1000) await flush();
    if (summary.read % 5000 === 0) onProgress?.(summary);
  }
  await flush();
  onProgress?.(summary);
  return summary;
}
