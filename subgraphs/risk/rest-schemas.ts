import { answer, arrayOf, bool, component, dateTime, int, nullable, num, str } from '../platform/rest/components.ts';
import type { JsonSchema } from '../platform/rest/types.ts';

/** The OpenAPI shapes of the Risk Index data sets (rest.ts), from the risk SDL. */

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
  index: nullable({ type: 'number', minimum: 0, maximum: 100, description: '0-100 index of the area, the same at every cell resolution; null outside coverage' }),
  modelVersion: { type: 'string', description: 'Version of the index model: indices compare only within one version (docs/risk-index.md)', example: '2.0' },
  areaKm2: { type: 'number', description: 'Exact area of the covered part of the search area, km²: the rates are over it' },
  years: nullable({ type: 'integer', description: 'Years of crash data' }), firstYear: nullableInt, lastYear: nullableInt,
  fatalCrashes: { type: 'integer', description: 'Fatal crashes inside the exact covered area' }, fatalities: int,
  fatalCrashesPerYear: nullableNum, fatalitiesPerYear: nullableNum,
  fatalCrashesPerKm2Year: nullable({ type: 'number', description: 'Over areaKm2' }), fatalitiesPerKm2Year: nullable({ type: 'number', description: 'Over areaKm2' }),
  rate: nullable({ type: 'number', description: 'The area\'s own rate: the mean of the two per-km² rates' }),
  smoothedRate: nullable({ type: 'number', description: 'The rate shrunk towards priorRate (empirical Bayes): what the index maps' }),
  credibility: nullable({ type: 'number', minimum: 0, maximum: 1, description: 'Share of the area\'s own data in smoothedRate' }),
  priorRate: nullable({ type: 'number', description: 'The covered states\' mean rate' }),
  referenceRate: nullable({ type: 'number', description: 'The rate scoring 50: the median rate of the H3 resolution-7 cells with a fatal crash' }),
  meanCellIndex: nullableNum, maxCellIndex: nullableNum, emptyCellIndex: nullable({ type: 'number', description: 'Index of a cell without a fatal crash' }),
  cellsWithCrashes: int, cellsKm2: { type: 'number', description: 'Area of the H3 cells touched (map and per-cell figures)' },
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
  pageInfo: answer({ hasNextPage: bool, endCursor: nullable({ type: 'string', description: 'Pass as `after` for the next page' }) }),
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

const geometry = component('GeoJsonGeometry', {
  type: 'object', description: 'An RFC 7946 geometry: longitude first, polygons closed and counter-clockwise',
  properties: { type: { type: 'string', enum: ['Point', 'LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon'] }, coordinates: { type: 'array' } },
  required: ['type', 'coordinates'],
});

/** The interactive map's layers (GET /riskIndex/v1/map/layers): one feature per area, county, place and cell. */
export const mapLayers = component('RiskMapLayers', {
  type: 'object', description: 'An RFC 7946 FeatureCollection of the map\'s layers, with the legend as a foreign member',
  properties: {
    type: { type: 'string', enum: ['FeatureCollection'] },
    features: arrayOf({
      type: 'object', required: ['type', 'properties', 'geometry'],
      properties: {
        type: { type: 'string', enum: ['Feature'] }, geometry,
        properties: {
          type: 'object', required: ['layer'], description: 'The fields of the feature\'s layer',
          properties: {
            layer: { type: 'string', enum: ['area', 'county', 'place', 'cell'] },
            name: { ...str, description: 'county, place' }, state: { ...str, description: 'county, place: CA or IL' },
            fips: { ...str, description: 'county: its FIPS code' }, population: { ...int, description: 'place' },
            h3: { ...str, description: 'cell: its H3 index' }, resolution: int, color: { ...str, description: 'cell: its fill' },
            index: { ...num, description: 'cell: its 0-100 index' }, fatalCrashes: int, fatalities: int,
            fatalCrashesPerKm2Year: num, fatalitiesPerKm2Year: num,
          },
        },
      },
    }),
    filter: nullable({ type: 'string', description: 'The crash filter the cells\' figures are of (its terms), null without one' }),
    legend: answer({
      title: str, noCrash: { ...str, description: 'Fill of a cell without a fatal crash' },
      bands: arrayOf(answer({ from: int, to: int, color: str })),
    }),
  },
  required: ['type', 'features', 'legend'],
});
