import { readFileSync } from 'node:fs';
import { badInput } from '../../subgraphs/platform/errors.ts';
import { embeddableHeaders } from '../security-headers.ts';
import { queryString } from './body.ts';
import type { JsonSchema, RestRequest, RestRoute } from './types.ts';
import { answer } from './components.ts';
import { area, DATA_SET_SCHEMAS } from './risk-schemas.ts';

export const RISK_PREFIX = '/riskIndex/v1';

const AREA = 'area { geometryType radius queryMethod areaKm2 coveredKm2 coveredFraction coverage outsideCoverage message states resolution cellsTouched dataStatus }';
const DATA_SETS = {
  riskInfo: 'riskInfo { index meanCellIndex maxCellIndex cellsWithCrashes cellsKm2 years fatalCrashes fatalities fatalCrashesPerYear fatalitiesPerYear fatalCrashesPerKm2Year fatalitiesPerKm2Year referenceRate '
    + 'distribution { from to cells } riskiestCells { cell resolution riskIndex latitude longitude fatal injury propertyDamageOnly fatalities areaKm2 fatalCrashesPerKm2Year fatalitiesPerKm2Year weightedCrashesPerYear exposureMvkt } '
    + 'severityWeights { fatal injury propertyDamageOnly } exposure method source sample }',
  accidentSummary: 'accidentSummary { total fatal injury propertyDamageOnly fatalities byYear { year fatal injury propertyDamageOnly total fatalities } byMonth { month name crashes } '
    + 'byHourOfWeek { hourOfWeek dayOfWeek hour crashes } byWeather { code name crashes } byLight { code name crashes } byRoadClass { code name crashes } source sample }',
  farsInfo: 'farsInfo(limit: $limit) { total fatalities returned records { ST_CASE STATE YEAR MONTH DAY HOUR MINUTE localDateTime LATITUDE LONGITUD FATALS PERSONS VE_TOTAL PEDS DRUNK_DR '
    + 'COUNTY CITY WEATHER WEATHERNAME LGT_COND LGT_CONDNAME FUNC_SYS FUNC_SYSNAME RUR_URB RUR_URBNAME source } source sample }',
  realtimeTraffic: 'realtimeTraffic { source asOf freshWithinMinutes hourOfWeek sensors meanSpeedKph meanVolumeVph observations { sensorId observedAt latitude longitude speedKph volumeVph } message sample }',
  historicalTraffic: 'historicalTraffic { sensors profile { hourOfWeek dayOfWeek hour meanVolumeVph meanSpeedKph } sample }',
} as const;
type DataSet = keyof typeof DATA_SETS;

/** The in-flight bound (gateway/in-flight.ts), on every Risk Index path. */
const BUSY = 'SERVICE_UNAVAILABLE: RISK_MAX_IN_FLIGHT Risk Index evaluations are running, or the geometry workers are busy: retry after Retry-After';

const operationName = (name: string) => `RiskIndex${name[0].toUpperCase()}${name.slice(1)}`;

function document(name: string, sets: DataSet[]) {
  const withLimit = sets.includes('farsInfo');
  return `query ${operationName(name)}($wkt: WKT!, $radius: Float, $queryMethod: String${withLimit ? ', $limit: Int' : ''}) { `
    + `riskIndex(wkt: $wkt, radius: $radius, queryMethod: $queryMethod) { ${AREA} ${sets.map((s) => DATA_SETS[s]).join(' ')} } }`;
}

function number(req: RestRequest, name: string, integer = false): number | undefined {
  const raw = queryString(req, name);
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || (integer && !Number.isInteger(value))) throw badInput(`${name} must be ${integer ? 'a whole number' : 'a number'}; got ${JSON.stringify(raw)}`, name);
  return value;
}

/** `geometry` (or its alias `wkt`), `radius` in degrees, `queryMethod`, and `limit` for FARS records. */
function variables(req: RestRequest, withLimit: boolean) {
  const wkt = queryString(req, 'geometry') ?? queryString(req, 'wkt');
  if (wkt === undefined || wkt.trim() === '') throw badInput('query parameter geometry (WKT, longitude first) is required', 'geometry');
  const vars: Record<string, unknown> = { wkt, radius: number(req, 'radius') ?? null, queryMethod: queryString(req, 'queryMethod') ?? null };
  if (withLimit) vars.limit = number(req, 'limit', true) ?? 100;
  return vars;
}

const queryDocs = (withLimit: boolean): Record<string, JsonSchema & { required?: boolean; description?: string }> => ({
  geometry: { type: 'string', required: true, description: 'Search area in WKT, longitude first: POINT, LINESTRING, POLYGON or a MULTI form (alias: wkt)', example: 'LINESTRING(-87.6766 41.8813, -87.6718 41.8814)' },
  wkt: { type: 'string', description: 'Alias of geometry' },
  radius: { type: 'number', minimum: 0, maximum: 5, description: 'Buffer around the geometry, in degrees (at most 5). Points and lines without one are buffered by 0.0005 degrees (about 50 m).' },
  queryMethod: { type: 'string', enum: ['ContainsBuffer'], description: 'Data inside the buffered geometry (the only method)' },
  ...(withLimit ? { limit: { type: 'integer', minimum: 0, maximum: 1000, default: 100, description: 'Most FARS records returned' } } : {}),
});

const outsideCoverageExample = JSON.parse(readFileSync(new URL('./examples/risk-outside-coverage.json', import.meta.url), 'utf8')) as Record<string, unknown>;

const ROUTES: { name: string; sets: DataSet[]; summary: string }[] = [
  { name: 'all', sets: ['riskInfo', 'accidentSummary', 'farsInfo', 'realtimeTraffic', 'historicalTraffic'], summary: 'Every data set for a search area' },
  { name: 'riskInfo', sets: ['riskInfo'], summary: '0-100 road risk index of the area, its distribution and riskiest H3 cells' },
  { name: 'accidentSummary', sets: ['accidentSummary'], summary: 'Crash counts by severity, year, month, hour of week, weather, light and road class' },
  { name: 'farsInfo', sets: ['farsInfo'], summary: 'Fatal crash records (NHTSA FARS accident.csv layout, codes decoded)' },
  { name: 'realtimeTraffic', sets: ['realtimeTraffic'], summary: 'Latest realtime traffic observations, else the current hour of the historical profile' },
  { name: 'historicalTraffic', sets: ['historicalTraffic'], summary: 'Speed and volume by hour of week' },
];

/** An example map, linked from /docs and the GraphQL IDE's Risk Index example: Chicago's Loop. */
export const RISK_MAP_EXAMPLE = `${RISK_PREFIX}/map?geometry=${encodeURIComponent('POINT(-87.6298 41.8781)')}&radius=0.02`;

/** `GET /riskIndex/v1/map`: the report's `map` field (SVG text), sent as image/svg+xml. */
const mapRoute: RestRoute = {
  method: 'GET', path: `${RISK_PREFIX}/map`, operationId: 'map', summary: 'SVG map of the area: H3 cells coloured by the index, crash points, legend, scale and source',
  tag: 'Risk Index', scope: null,
  operation: 'query RiskIndexMap($wkt: WKT!, $radius: Float, $queryMethod: String) { riskIndex(wkt: $wkt, radius: $radius, queryMethod: $queryMethod) { map } }',
  variables: (req) => variables(req, false),
  result: (d) => (d.riskIndex as { map: string }).map,
  headers: () => ({ 'content-type': 'image/svg+xml; charset=utf-8', 'cache-control': 'public, max-age=300' }),
  securityHeaders: embeddableHeaders,
  docs: {
    description: `No authentication; the same validation and limits as the other Risk Index paths (invalid input is 400 problem+json). `
      + 'An 800 x 640 SVG: the search area (dashed), the outline of the covered state(s), the H3 cells coloured by their 0-100 index with a legend, '
      + 'a scale bar, the fatal crashes as dots when the area is at most 1,000 km² and holds at most 2,000 of them, and the source line. '
      + `Example: [Chicago's Loop](${RISK_MAP_EXAMPLE}). GraphQL: the \`map\` field of \`riskIndex\`. See docs/risk-index.md.`,
    query: queryDocs(false),
    response: { type: 'string', description: 'SVG document' },
    responseContentType: 'image/svg+xml',
    problems: { 503: BUSY },
  },
};

/** The Risk Index GET paths: public, each running `riskIndex` with only its data sets selected, and the map. */
export const riskRoutes: RestRoute[] = [...ROUTES.map(({ name, sets, summary }): RestRoute => {
  const withLimit = sets.includes('farsInfo');
  return {
    method: 'GET', path: `${RISK_PREFIX}/${name}`, operationId: name, summary, tag: 'Risk Index', scope: null,
    operation: document(name, sets),
    variables: (req) => variables(req, withLimit),
    result: (d) => d.riskIndex,
    docs: {
      description: 'No authentication. The response carries `area` (coverage, H3 resolution, cells touched) and the data set(s). '
        + 'Outside California and Illinois: 200 with empty data sets and `area.outsideCoverage: true`. See docs/risk-index.md.',
      query: queryDocs(withLimit),
      problems: { 422: 'GEOMETRY_TOO_COMPLEX: the search area passes a limit, named in `limit` (vertices, areaKm2, cells, bufferedVertices, timeMs, heapMb) with `max` and `got`', 503: BUSY },
      response: answer({ area, ...Object.fromEntries(sets.map((s) => [s, DATA_SET_SCHEMAS[s]])) }),
      // A real answer for an area outside coverage (lists shortened to two entries).
      responseExample: { area: outsideCoverageExample.area, ...Object.fromEntries(sets.map((set) => [set, outsideCoverageExample[set]])) },
    },
  };
}), mapRoute];
