import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import type { EntityManager } from '@mikro-orm/core';
import { bulkInsert } from '../../platform/db/bulk.ts';
import type { Crash } from '../entities.ts';
import { cellsOf } from '../geometry/cells.ts';
import { COVERED_STATES } from '../geometry/coverage.ts';
import { FUNCTIONAL_SYSTEM, hourOfWeek, LIGHT_CONDITION, ROAD_FNC_TO_FUNC_SYS, WEATHER } from './codes.ts';

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

/**
 * FARS codes unknown positions as 77.7777/88.8888/99.9999 (latitude) and 777.7777/888.8888/999.9999
 * (longitude, with or without sign); anything out of range or 0,0 is no position either.
 */
export function unknownPosition(lat: number, lon: number): boolean {
  if (!Number.isFinite(lat) || !Number.isFinite(lon) || (lat === 0 && lon === 0)) return true;
  if ([77.7777, 88.8888, 99.9999].includes(Math.abs(lat)) || [777.7777, 888.8888, 999.9999].includes(Math.abs(lon))) return true;
  return Math.abs(lat) > 90 || Math.abs(lon) > 180;
}

/** A FARS code and its label (the file's *NAME column when present, else the manual's table). */
function coded(row: Record<string, string>, column: string, table: Record<number, string>, code = int(row[column])) {
  const name = row[`${column}NAME`]?.trim() || (code !== null ? table[code] : undefined) || null;
  return { code, name: name ? name.slice(0, 80) : null };
}

/** FUNC_SYS and RUR_URB, or their equivalent from the pre-2015 ROAD_FNC. */
function roadClass(row: Record<string, string>) {
  const roadFnc = int(row.ROAD_FNC);
  if (row.FUNC_SYS === undefined && roadFnc !== null) {
    const [funcSys, ruralUrban] = ROAD_FNC_TO_FUNC_SYS[roadFnc] ?? [99, 9];
    return { func: { code: funcSys, name: FUNCTIONAL_SYSTEM[funcSys] ?? null }, ruralUrban };
  }
  return { func: coded(row, 'FUNC_SYS', FUNCTIONAL_SYSTEM), ruralUrban: int(row.RUR_URB) };
}

export type FarsRowResult = { crash: Crash } | { skip: keyof FarsSummary['skipped'] };

/** One accident.csv record as a crash row, or why it is skipped. */
export function farsRow(row: Record<string, string>): FarsRowResult {
  const [stCase, state, year, month, day, fatals] = ['ST_CASE', 'STATE', 'YEAR', 'MONTH', 'DAY', 'FATALS'].map((c) => int(row[c]));
  if (stCase === null || state === null || year === null || month === null || day === null || month < 1 || month > 12 || day < 1 || day > 31) return { skip: 'invalid' };
  if (!COVERED_FIPS.has(state)) return { skip: 'outsideCoverage' };
  const lat = Number(row.LATITUDE);
  const lon = Number(row.LONGITUD);
  if (unknownPosition(lat, lon)) return { skip: 'noLocation' };
  // Attributed to its state by its code, not by its position: the 1:10,000,000 boundaries put a
  // crash on a shore or a border road just outside now and then.
  const rawHour = int(row.HOUR);
  const rawMinute = int(row.MINUTE);
  const hour = rawHour !== null && rawHour >= 0 && rawHour <= 23 ? rawHour : null;
  const minute = rawMinute !== null && rawMinute >= 0 && rawMinute <= 59 ? rawMinute : null;
  const weather = coded(row, 'WEATHER', WEATHER);
  const light = coded(row, 'LGT_COND', LIGHT_CONDITION);
  const road = roadClass(row);
  return {
    crash: {
      id: `fars-${year}-${stCase}`, source: 'fars', caseNumber: stCase, state, year, month, day, hour, minute,
      hourOfWeek: hourOfWeek(year, month, day, hour), latitude: lat, longitude: lon, severity: 'fatal',
      fatalities: Math.max(1, fatals ?? 1), persons: int(row.PERSONS), vehicles: int(row.VE_TOTAL),
      peds: int(row.PEDS), drunkDrivers: int(row.DRUNK_DR), ruralUrban: road.ruralUrban,
      county: int(row.COUNTY), city: int(row.CITY),
      weather: weather.code, weatherName: weather.name, lightCondition: light.code, lightConditionName: light.name,
      functionalSystem: road.func.code, functionalSystemName: road.func.name, ...cellsOf(lat, lon),
    } as Crash,
  };
}

const CRASH_COLUMNS: [property: keyof Crash, column: string, type: string][] = [
  ['id', 'id', 'varchar(40)'], ['source', 'source', 'text'], ['caseNumber', 'case_number', 'int'], ['state', 'state', 'smallint'],
  ['year', 'year', 'smallint'], ['month', 'month', 'smallint'], ['day', 'day', 'smallint'], ['hour', 'hour', 'smallint'],
  ['minute', 'minute', 'smallint'], ['hourOfWeek', 'hour_of_week', 'smallint'], ['latitude', 'latitude', 'double precision'],
  ['longitude', 'longitude', 'double precision'], ['severity', 'severity', 'text'], ['fatalities', 'fatalities', 'smallint'],
  ['persons', 'persons', 'smallint'], ['vehicles', 'vehicles', 'smallint'], ['peds', 'peds', 'smallint'], ['drunkDrivers', 'drunk_drivers', 'smallint'],
  ['ruralUrban', 'rural_urban', 'smallint'], ['county', 'county', 'int'], ['city', 'city', 'int'], ['weather', 'weather', 'smallint'],
  ['weatherName', 'weather_name', 'varchar(80)'], ['lightCondition', 'light_condition', 'smallint'], ['lightConditionName', 'light_condition_name', 'varchar(80)'],
  ['functionalSystem', 'functional_system', 'smallint'], ['functionalSystemName', 'functional_system_name', 'varchar(80)'],
  ['h3r5', 'h3r5', 'varchar(16)'], ['h3r7', 'h3r7', 'varchar(16)'], ['h3r9', 'h3r9', 'varchar(16)'],
];
const CRASH_COLUMN_TYPES = Object.fromEntries(CRASH_COLUMNS.map(([, column, type]) => [column, type]));

/** Writes crash rows in bulk; a case already stored (same id) is updated. */
export function writeCrashes(em: EntityManager, crashes: Crash[]) {
  const rows = crashes.map((c) => Object.fromEntries(CRASH_COLUMNS.map(([p, column]) => [column, c[p] ?? null])));
  return bulkInsert(em, { schema: 'risk', name: 'risk_crashes' }, CRASH_COLUMN_TYPES, rows, { conflict: ['id'] });
}

/**
 * Streams a FARS accident.csv (any year's layout that has the required columns; a UTF-8 BOM is fine)
 * into the crash table. Rows of other states (by their STATE code) or without a position are skipped.
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
    summary.loaded += await writeCrashes(em, batch);
    batch = [];
  };
  for await (const record of parser as AsyncIterable<Record<string, string>>) {
    summary.read++;
    const result = farsRow(record);
    if ('skip' in result) summary.skipped[result.skip]++;
    else batch.push(result.crash);
    if (batch.length >= 5000) await flush();
    if (summary.read % 5000 === 0) onProgress?.(summary);
  }
  await flush();
  onProgress?.(summary);
  return summary;
}
