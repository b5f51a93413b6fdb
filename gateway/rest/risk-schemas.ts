import { answer, arrayOf, bool, component, dateTime, int, nullable, num, str } from './components.ts';
import type { JsonSchema } from './types.ts';

/** The OpenAPI shapes of the Risk Index data sets (gateway/rest/risk.ts), from the risk SDL. */

const nullableNum = nullable(num);
const nullableInt = nullable(int);
const hourOfWeek: JsonSchema = { type: 'integer', minimum: 0, maximum: 167, description: 'Hour of the week, 0 = Monday 00:00 local time' };
const source = nullable({ type: 'string', description: 'Where the data comes from; null when there is none' });
const sample = { type: 'boolean', description: 'True when the data is the bundled sample, not the full data set' };

export const area = component('RiskArea', answer({
  geometryType: str, radius: nullable({ type: 'number', description: 'Buffer in degrees' }), queryMethod: str,
  areaKm2: num, coveredKm2: num, coveredFraction: { type: 'number', minimum: 0, maximum: 1 },
  coverage: { type: 'string', enum: ['COVERED', 'PARTIAL', 'OUTSIDE'] }, outsideCoverage: bool, message: str,
  states: arrayOf({ type: 'string', enum: ['CA', 'IL'] }), resolution: nullable({ type: 'integer', description: 'H3 resolution of the cells' }), cellsTouched: int,
  dataStatus: { type: 'string', enum: ['READY', 'LOADING', 'FAILED'], description: 'LOADING while the first start loads the crash data in the background' },
}, { description: 'The search area: its coverage by the data, H3 resolution and cells touched' }));

const cell = answer({
  cell: { type: 'string', description: 'H3 cell index' }, resolution: int, riskIndex: { type: 'number', minimum: 0, maximum: 100 }, latitude: num, longitude: num,
  fatal: int, injury: int, propertyDamageOnly: int, fatalities: int, areaKm2: num, fatalCrashesPerKm2Year: num, fatalitiesPerKm2Year: num,
  weightedCrashesPerYear: { ...nullableNum, deprecated: true, description: 'No severity weighting any more; use fatalCrashesPerKm2Year and fatalitiesPerKm2Year' },
  exposureMvkt: { ...nullableNum, deprecated: true, description: 'The index uses no traffic exposure' },
});

export const riskInfo = component('RiskInfo', answer({
  index: nullable({ type: 'number', minimum: 0, maximum: 100, description: '0-100 road risk index of the area; null without data' }),
  meanCellIndex: nullableNum, maxCellIndex: nullableNum, cellsWithCrashes: int, cellsKm2: num, years: nullable({ type: 'integer', description: 'Years of crash data' }),
  fatalCrashes: int, fatalities: int, fatalCrashesPerYear: nullableNum, fatalitiesPerYear: nullableNum, fatalCrashesPerKm2Year: nullableNum, fatalitiesPerKm2Year: nullableNum,
  referenceRate: nullableNum,
  distribution: arrayOf(answer({ from: int, to: int, cells: int }), { description: 'Cells per index band' }),
  riskiestCells: arrayOf(cell),
  severityWeights: { ...nullable(answer({ fatal: num, injury: num, propertyDamageOnly: num })), deprecated: true, description: 'The index is built from fatal crashes and fatalities only; see method' },
  exposure: str, method: str, source, sample,
}, { description: 'The road risk index of the area, its distribution and riskiest H3 cells' }));

const codeCount = answer({ code: nullableInt, name: str, crashes: int });
export const accidentSummary = component('RiskAccidentSummary', answer({
  total: int, fatal: int, injury: int, propertyDamageOnly: int, fatalities: int,
  byYear: arrayOf(answer({ year: int, fatal: int, injury: int, propertyDamageOnly: int, total: int, fatalities: int })),
  byMonth: arrayOf(answer({ month: { type: 'integer', minimum: 1, maximum: 12 }, name: str, crashes: int })),
  byHourOfWeek: arrayOf(answer({ hourOfWeek, dayOfWeek: str, hour: { type: 'integer', minimum: 0, maximum: 23 }, crashes: int })),
  byWeather: arrayOf(codeCount), byLight: arrayOf(codeCount), byRoadClass: arrayOf(codeCount), source, sample,
}, { description: 'Crash counts by severity, year, month, hour of week, weather, light and road class' }));

export const farsInfo = component('RiskFarsInfo', answer({
  total: int, fatalities: int, returned: int,
  records: arrayOf(answer({
    ST_CASE: int, STATE: int, YEAR: int, MONTH: int, DAY: int, HOUR: int, MINUTE: int, localDateTime: { type: 'string', description: 'Local date and time of the crash' },
    LATITUDE: num, LONGITUD: num, FATALS: int, PERSONS: nullableInt, VE_TOTAL: nullableInt, PEDS: nullableInt, DRUNK_DR: nullableInt, COUNTY: nullableInt, CITY: nullableInt,
    WEATHER: nullableInt, WEATHERNAME: nullable(str), LGT_COND: nullableInt, LGT_CONDNAME: nullable(str), FUNC_SYS: nullableInt, FUNC_SYSNAME: nullable(str),
    RUR_URB: nullableInt, RUR_URBNAME: nullable(str), source: str,
  }, { description: 'A FARS accident.csv record, codes decoded' })),
  source, sample,
}, { description: 'Fatal crash records (NHTSA FARS)' }));

export const realtimeTraffic = component('RiskRealtimeTraffic', answer({
  source: { type: 'string', enum: ['REALTIME', 'HISTORICAL_PROFILE', 'NONE'] }, asOf: nullable(dateTime), freshWithinMinutes: int, hourOfWeek: nullable(hourOfWeek),
  sensors: int, meanSpeedKph: nullableNum, meanVolumeVph: nullableNum,
  observations: arrayOf(answer({ sensorId: str, observedAt: dateTime, latitude: num, longitude: num, speedKph: num, volumeVph: nullableNum })),
  message: str, sample,
}, { description: 'Latest realtime traffic observations, else the current hour of the historical profile' }));

export const historicalTraffic = component('RiskHistoricalTraffic', answer({
  sensors: int,
  profile: arrayOf(answer({ hourOfWeek, dayOfWeek: str, hour: { type: 'integer', minimum: 0, maximum: 23 }, meanVolumeVph: nullableNum, meanSpeedKph: nullableNum })),
  sample,
}, { description: 'Speed and volume by hour of week' }));

/** Each data set's shape, by its name in the answer. */
export const DATA_SET_SCHEMAS: Record<string, JsonSchema> = { riskInfo, accidentSummary, farsInfo, realtimeTraffic, historicalTraffic };
