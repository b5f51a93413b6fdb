import { RURAL_URBAN } from '../data/codes.ts';
import type { Crash } from '../entities.ts';

/** A stored fatal crash as read for its FARS record (what farsInfo and the crash exports give of it). */
export type FarsRow = Pick<Crash, 'caseNumber' | 'state' | 'year' | 'month' | 'day' | 'hour' | 'minute' | 'latitude' | 'longitude' | 'fatalities' | 'persons'
  | 'vehicles' | 'peds' | 'drunkDrivers' | 'county' | 'city' | 'weather' | 'weatherName' | 'lightCondition' | 'lightConditionName'
  | 'functionalSystem' | 'functionalSystemName' | 'ruralUrban' | 'source'>;
export const FARS_ROW_COLUMNS = ['case_number', 'state', 'year', 'month', 'day', 'hour', 'minute', 'latitude', 'longitude', 'fatalities', 'persons', 'vehicles',
  'peds', 'drunk_drivers', 'county', 'city', 'weather', 'weather_name', 'light_condition', 'light_condition_name', 'functional_system',
  'functional_system_name', 'rural_urban', 'source'];

/** The fields of a FARS record, in the order of the GraphQL type and of the CSV export's columns. */
export const FARS_RECORD_FIELDS = ['ST_CASE', 'STATE', 'YEAR', 'MONTH', 'DAY', 'HOUR', 'MINUTE', 'localDateTime', 'LATITUDE', 'LONGITUD', 'FATALS', 'PERSONS',
  'VE_TOTAL', 'PEDS', 'DRUNK_DR', 'COUNTY', 'CITY', 'WEATHER', 'WEATHERNAME', 'LGT_COND', 'LGT_CONDNAME', 'FUNC_SYS', 'FUNC_SYSNAME', 'RUR_URB',
  'RUR_URBNAME', 'source'] as const;
export type FarsRecord = Record<(typeof FARS_RECORD_FIELDS)[number], string | number | null>;

const pad = (n: number) => String(n).padStart(2, '0');

/** Local date and time of a crash, `YYYY-MM-DDTHH:MM` (the date alone when the time is unknown). */
const localDateTime = (c: FarsRow) => `${c.year}-${pad(c.month)}-${pad(c.day)}${c.hour != null ? `T${pad(c.hour)}:${pad(c.minute ?? 0)}` : ''}`;

/** A crash in the NHTSA FARS accident.csv layout, codes decoded (unknown hour and minute: 99). */
export const farsRecord = (c: FarsRow): FarsRecord => ({
  ST_CASE: c.caseNumber, STATE: c.state, YEAR: c.year, MONTH: c.month, DAY: c.day, HOUR: c.hour ?? 99, MINUTE: c.minute ?? 99,
  localDateTime: localDateTime(c),
  LATITUDE: c.latitude, LONGITUD: c.longitude, FATALS: c.fatalities, PERSONS: c.persons ?? null, VE_TOTAL: c.vehicles ?? null,
  PEDS: c.peds ?? null, DRUNK_DR: c.drunkDrivers ?? null,
  COUNTY: c.county ?? null, CITY: c.city ?? null, WEATHER: c.weather ?? null, WEATHERNAME: c.weatherName ?? null, LGT_COND: c.lightCondition ?? null,
  LGT_CONDNAME: c.lightConditionName ?? null, FUNC_SYS: c.functionalSystem ?? null, FUNC_SYSNAME: c.functionalSystemName ?? null,
  RUR_URB: c.ruralUrban ?? null, RUR_URBNAME: c.ruralUrban != null ? RURAL_URBAN[c.ruralUrban] ?? null : null,
  source: c.source.toUpperCase(),
});
