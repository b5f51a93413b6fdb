import { badInput } from '../../platform/errors.ts';
import { RURAL_URBAN } from '../data/codes.ts';
import type { Crash } from '../entities.ts';
import { cellColumn } from '../geometry/cells.ts';
import { cellArray, selectList, type AreaQuery } from './area.ts';
import { readRows } from './read.ts';

export const MAX_FARS_RECORDS = 1000;

type FarsRow = Pick<Crash, 'caseNumber' | 'state' | 'year' | 'month' | 'day' | 'hour' | 'minute' | 'latitude' | 'longitude' | 'fatalities' | 'persons'
  | 'vehicles' | 'peds' | 'drunkDrivers' | 'county' | 'city' | 'weather' | 'weatherName' | 'lightCondition' | 'lightConditionName'
  | 'functionalSystem' | 'functionalSystemName' | 'ruralUrban' | 'source'>;
const RECORD_SELECT = selectList(['case_number', 'state', 'year', 'month', 'day', 'hour', 'minute', 'latitude', 'longitude', 'fatalities', 'persons', 'vehicles',
  'peds', 'drunk_drivers', 'county', 'city', 'weather', 'weather_name', 'light_condition', 'light_condition_name', 'functional_system',
  'functional_system_name', 'rural_urban', 'source']);

const pad = (n: number) => String(n).padStart(2, '0');

/** Local date and time of a crash, `YYYY-MM-DDTHH:MM` (the date alone when the time is unknown). */
const localDateTime = (c: FarsRow) => `${c.year}-${pad(c.month)}-${pad(c.day)}${c.hour != null ? `T${pad(c.hour)}:${pad(c.minute ?? 0)}` : ''}`;

/** Fatal crash records of the area in the FARS accident.csv layout, codes decoded, most recent first. */
export async function farsInfo(q: AreaQuery, limit = 100) {
  if (!Number.isInteger(limit) || limit < 0 || limit > MAX_FARS_RECORDS) throw badInput(`limit must be a whole number from 0 to ${MAX_FARS_RECORDS}`, 'limit');
  if (!q.cells.length || q.resolution === null) return { total: 0, fatalities: 0, returned: 0, records: [], source: null, sample: false };
  const cells = await q.crashCells();
  const total = cells.reduce((s, c) => s + c.fatal, 0);
  const fatalities = cells.reduce((s, c) => s + c.fatalities, 0);
  // Plain rows in the order of the recency index (risk_crashes_recent_idx), no entities. Only the cells
  // holding a fatal crash are named: a shorter list is planned in a third of the time.
  const withCrashes = cells.filter((c) => c.fatal > 0).map((c) => c.cell);
  const rows: FarsRow[] = limit === 0 || total === 0 ? [] : await readRows<FarsRow>(q.em, 
    `select ${RECORD_SELECT} from "risk"."risk_crashes" where "severity" = 'fatal' and "${cellColumn(q.resolution)}" = any(?::text[])
     order by "year" desc, "month" desc, "day" desc, "hour" desc, "case_number" asc limit ?`, [cellArray(withCrashes), limit]);
  const sources = await q.sources();
  return {
    total, fatalities, returned: rows.length,
    records: rows.map((c) => ({
      ST_CASE: c.caseNumber, STATE: c.state, YEAR: c.year, MONTH: c.month, DAY: c.day, HOUR: c.hour ?? 99, MINUTE: c.minute ?? 99,
      localDateTime: localDateTime(c),
      LATITUDE: c.latitude, LONGITUD: c.longitude, FATALS: c.fatalities, PERSONS: c.persons, VE_TOTAL: c.vehicles,
      PEDS: c.peds ?? null, DRUNK_DR: c.drunkDrivers ?? null,
      COUNTY: c.county, CITY: c.city, WEATHER: c.weather, WEATHERNAME: c.weatherName, LGT_COND: c.lightCondition,
      LGT_CONDNAME: c.lightConditionName, FUNC_SYS: c.functionalSystem, FUNC_SYSNAME: c.functionalSystemName,
      RUR_URB: c.ruralUrban ?? null, RUR_URBNAME: c.ruralUrban != null ? RURAL_URBAN[c.ruralUrban] ?? null : null,
      source: c.source.toUpperCase(),
    })),
    source: sources.crashes.source,
    sample: sources.crashes.sample,
  };
}
