import {
  RISK_EXPORT_DATA, RISK_EXPORT_PAGE, RISK_REST_PREFIX, type RiskExportData,
} from './rules.ts';
import { badInput } from '../platform/errors.ts';
import { riskAreaKey } from './area-key.ts';
import { decodeRiskArea, encodeRiskArea } from './export/url.ts';
import { exportFormat } from './export/format.ts';
import { batchRoutes } from './batch/rest.ts';
import { queryString } from '../platform/rest/body.ts';
import { typedRoute, type RestOperation } from '../platform/rest/operation.ts';
import { embeddableHeaders, type JsonSchema, type RestRequest, type RestRoute } from '../platform/rest/types.ts';
import { answer } from '../platform/rest/components.ts';
import { area as areaSchema, DATA_SET_SCHEMAS, mapLayers as mapLayersSchema } from './rest-schemas.ts';
import { crashFilterFromQuery, crashFilterKey, crashFilterParams, type CrashFilter } from './filter/crash-filter.ts';
import { appliedFilterSchema, crashFilterQueryDocs } from './filter/rest-docs.ts';
import {
  RiskIndexAccidentSummary, RiskIndexAll, RiskIndexExportCells, RiskIndexExportCrashes, RiskIndexFarsInfo,
  RiskIndexHistoricalTraffic, RiskIndexMap, RiskIndexMapLayers, RiskIndexRealtimeTraffic, RiskIndexRiskInfo,
  type RestFarsInfoFragment, type RiskDataStatus, type RiskIndexAllQuery, type RiskIndexExportCellsQuery,
} from './rest.generated.ts';

export const RISK_PREFIX = RISK_REST_PREFIX;

/** The data sets of a report, each a path of its own; `all` selects every one. */
type DataSet = Exclude<keyof RiskIndexAllQuery['riskIndex'], 'area'>;

/**
 * How long a cache may reuse an answer without asking again: the crash data change only on an ingest,
 * after which a revalidation (If-None-Match) gets the new answer.
 */
export const RISK_MAX_AGE = 300;
/** What every cacheable row's operation selects: whether the crash data are loaded. */
interface Evaluated { riskIndex: { area: { dataStatus: RiskDataStatus } } }
/** Cacheable once the crash data are loaded (an answer while they load is incomplete). */
const CACHE = {
  maxAge: RISK_MAX_AGE,
  when: (d: Evaluated) => d.riskIndex.area.dataStatus === 'READY',
  // The area as the geometry workers' cache keys it (every spelling of one area), the method as resolveArea reads it, the rest (paging, format) as given.
  // The filter by its key (every spelling of one filter).
  key: ({ wkt, radius, queryMethod, filter, ...rest }: Record<string, unknown>) => ({
    area: riskAreaKey(String(wkt), typeof radius === 'number' ? radius : null),
    queryMethod: String(queryMethod ?? '').trim().toLowerCase() || 'containsbuffer', filter: crashFilterKey(filter as CrashFilter | null), ...rest,
  }),
};

/** The crash filter of a request: the query parameters of its names (filter/crash-filter.ts). */
const filterOf = (req: RestRequest) => crashFilterFromQuery((name) => queryString(req, name));

/** What an answer under a filter says of it in a header (a map or a file has no room for it): the filter's key. */
const FILTER_HEADER = 'crash-filter';
const filterHeader = (d: { riskIndex: { filter: { key: string } | null } }): Record<string, string> =>
  (d.riskIndex.filter ? { [FILTER_HEADER]: d.riskIndex.filter.key } : {});
const filterHeaderDoc = {
  'Crash-Filter': { description: 'The crash filter applied (its key: the query parameters that give it), absent without one', schema: { type: 'string' } },
};

/** The in-flight bound (gateway/protection/in-flight.ts), on every Risk Index path. */
const BUSY = 'SERVICE_UNAVAILABLE: RISK_MAX_IN_FLIGHT Risk Index evaluations are running, or the geometry workers are busy: retry after Retry-After';

const TOO_COMPLEX = 'GEOMETRY_TOO_COMPLEX: the search area passes a limit, named in `limit` (vertices, areaKm2, cells, bufferedVertices, pointTests, timeMs, heapMb, '
  + 'crashes: the crash rows a filter reads) with `max` and `got`';

function number(req: RestRequest, name: string, integer = false): number | undefined {
  const raw = queryString(req, name);
  if (raw === undefined || raw.trim() === '') return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || (integer && !Number.isInteger(value))) throw badInput(`${name} must be ${integer ? 'a whole number' : 'a number'}; got ${JSON.stringify(raw)}`, name);
  return value;
}

/** The area: `geometry` (or its alias `wkt`), `radius` in degrees and `queryMethod`, or (paged paths) the `area` token of a next-page link. */
function area(req: RestRequest, paged: boolean) {
  const token = paged ? queryString(req, 'area') : undefined;
  const wkt = queryString(req, 'geometry') ?? queryString(req, 'wkt');
  if (token !== undefined) {
    if (wkt !== undefined) throw badInput('give the area as geometry or as an area token, not both', 'area');
    const { wkt: tokenWkt, radius, queryMethod } = decodeRiskArea(token);
    return { wkt: tokenWkt, radius: radius ?? null, queryMethod: queryMethod ?? null };
  }
  if (wkt === undefined || wkt.trim() === '') throw badInput('query parameter geometry (WKT, longitude first) is required', 'geometry');
  return { wkt, radius: number(req, 'radius') ?? null, queryMethod: queryString(req, 'queryMethod') ?? null };
}

/** The crash filter, the area, and `limit` (or `first`) and `after` for FARS records. */
function variables(req: RestRequest, withLimit: boolean, paged = withLimit) {
  // The filter is checked first, as GraphQL's resolver does.
  const filter = filterOf(req);
  const vars: Record<string, unknown> = { ...area(req, paged), filter, resolution: number(req, 'resolution', true) ?? null };
  if (withLimit) Object.assign(vars, { limit: number(req, 'limit', true) ?? 100, first: number(req, 'first', true) ?? null, after: queryString(req, 'after') ?? null });
  return vars;
}

/**
 * RFC 8288 `Link: <...>; rel="next"`: the same path and page size behind `after`, the area as its token
 * (a state's outline repeated verbatim would make the header too long for common clients).
 */
const nextLink = (path: string, req: RestRequest, after: string) => {
  const query = new URLSearchParams({ area: encodeRiskArea(area(req, true)) });
  for (const [name, value] of crashFilterParams(filterOf(req))) query.set(name, value);
  for (const name of ['resolution', 'limit', 'first']) {
    const value = queryString(req, name);
    if (value !== undefined) query.set(name, value);
  }
  query.set('after', after);
  return `<${path}?${query}>; rel="next"`;
};
const linkHeaderDoc = { description: 'RFC 8288 link to the next page (`rel="next"`), present while more rows follow', schema: { type: 'string' } };

const queryDocs = (withLimit: boolean, paged = withLimit): Record<string, JsonSchema & { required?: boolean; description?: string }> => ({
  geometry: { type: 'string', required: !paged, description: `Search area in WKT, longitude first: POINT, LINESTRING, POLYGON or a MULTI form (alias: wkt)${paged ? '; required unless area is given' : ''}`, example: 'LINESTRING(-87.6766 41.8813, -87.6718 41.8814)' },
  wkt: { type: 'string', description: 'Alias of geometry' },
  radius: { type: 'number', minimum: 0, maximum: 5, description: 'Buffer around the geometry, in degrees (at most 5). Points and lines without one are buffered by 0.0005 degrees (about 50 m).' },
  queryMethod: { type: 'string', enum: ['ContainsBuffer'], description: 'Data inside the buffered geometry (the only method)' },
  resolution: {
    type: 'integer', enum: [5, 7, 9], example: 7,
    description: 'H3 resolution of the cells (5: about 250 km² each, 7: about 5 km², 9: about 0.1 km²); without it, the finest whose cells over the area number '
      + 'at most 3,000. An area with more than RISK_MAX_CELLS (10,000) cells at the resolution asked is refused before any work (422 GEOMETRY_TOO_COMPLEX, limit `cells`)',
  },
  ...(paged ? { area: { type: 'string', description: 'The area of a next-page link (geometry, radius and queryMethod as one opaque token), instead of them' } } : {}),
  ...crashFilterQueryDocs(),
  ...(withLimit ? {
    limit: { type: 'integer', minimum: 0, maximum: 1000, default: 100, description: 'FARS records of this page (larger areas: walk the pages with `after`)' },
    first: { type: 'integer', minimum: 0, maximum: 1000, description: 'The same as limit, which it takes the place of when given' },
    after: { type: 'string', description: '`farsInfo.pageInfo.endCursor` of the previous page (the Link header rel="next" carries it)' },
  } : {}),
});

/** An example map, linked from /docs and the GraphQL IDE's Risk Index example: Chicago's Loop. */
export const RISK_MAP_EXAMPLE = `${RISK_PREFIX}/map?geometry=${encodeURIComponent('POINT(-87.6298 41.8781)')}&radius=0.02`;
/** The interactive map (map-page/), same parameters as the SVG. */
export const RISK_MAP_VIEW_PATH = `${RISK_PREFIX}/map/view`;
export const RISK_MAP_LAYERS_PATH = `${RISK_PREFIX}/map/layers`;
export const RISK_MAP_VIEW_EXAMPLE = `${RISK_MAP_VIEW_PATH}?geometry=${encodeURIComponent('POINT(-87.6298 41.8781)')}&radius=0.02`;

/** `GET /riskIndex/v1/map`: the report's `map` field (SVG text), sent as image/svg+xml. */
const mapRoute = typedRoute(RiskIndexMap, {
  method: 'GET', path: `${RISK_PREFIX}/map`, operationId: 'map', summary: 'SVG map of the area: H3 cells coloured by the index, crash points, legend, scale and source',
  tag: 'Risk Index', scope: null,
  variables: (req) => variables(req, false),
  result: (d) => d.riskIndex.map,
  headers: (d) => ({ 'content-type': 'image/svg+xml; charset=utf-8', ...filterHeader(d) }),
  cache: CACHE,
  securityHeaders: embeddableHeaders,
  docs: {
    description: `No authentication; the same validation and limits as the other Risk Index paths (invalid input is 400 problem+json). `
      + 'An 800 x 640 SVG: the search area (dashed), the outline of the covered state(s) and their county boundaries, the names of places of 100,000 people or more, the H3 cells coloured by their 0-100 index with a legend, '
      + 'a scale bar, the fatal crashes as dots when the area is at most 1,000 km² and holds at most 2,000 of them, and the source line. '
      + `Example: [Chicago's Loop](${RISK_MAP_EXAMPLE}); the same area on the interactive map: [${RISK_MAP_VIEW_PATH}](${RISK_MAP_VIEW_EXAMPLE}). GraphQL: the \`map\` field of \`riskIndex\`. See docs/risk-index.md.`,
    query: queryDocs(false),
    response: { type: 'string', description: 'SVG document' },
    responseContentType: 'image/svg+xml',
    responseHeaders: filterHeaderDoc,
    problems: { 422: TOO_COMPLEX, 503: BUSY },
  },
});

const EXPORTS = {
  cells: {
    summary: 'Every H3 cell of the area as GeoJSON polygons or CSV: counts, rates, index, resolution',
    rows: 'cells (in H3 index order)',
    holds: 'one row per H3 cell of the area at `area.resolution` (cells without crashes included, zeros): `cell` (H3 index), `resolution`, `riskIndex`, '
      + 'centroid `latitude`/`longitude`, `fatal`, `injury`, `propertyDamageOnly`, `fatalities`, `areaKm2`, `fatalCrashesPerKm2Year`, `fatalitiesPerKm2Year`; '
      + 'GeoJSON: a Polygon per cell; CSV: the polygon as WKT in `wkt`',
  },
  crashes: {
    summary: 'The fatal crashes of the area as GeoJSON points or CSV: every FARS field kept, codes decoded',
    rows: 'crashes (most recent first)',
    holds: 'one row per fatal crash with every field of its FARS record as farsInfo gives it (ST_CASE ... RUR_URBNAME, source); GeoJSON: a Point [LONGITUD, LATITUDE]',
  },
} as const;

/** Each export's operation: the same selection of `exportPage`, for its data. */
const EXPORT_OPERATIONS: Record<RiskExportData, RestOperation<RiskIndexExportCellsQuery>> = {
  cells: RiskIndexExportCells, crashes: RiskIndexExportCrashes,
};

/** `GET /riskIndex/v1/export/{cells,crashes}`: one page of the report's `exportPage`, sent as a GeoJSON or CSV file. */
function exportRoutes(): RestRoute[] {
  return RISK_EXPORT_DATA.map((data) => typedRoute(EXPORT_OPERATIONS[data], {
    method: 'GET', path: `${RISK_PREFIX}/export/${data}`, operationId: `export${data[0].toUpperCase()}${data.slice(1)}`, summary: EXPORTS[data].summary,
    tag: 'Risk Index', scope: null,
    variables: (req) => ({
      ...variables(req, false, true), format: exportFormat(req).toUpperCase(), first: number(req, 'limit', true) ?? null, after: queryString(req, 'after') ?? null,
    }),
    // Bytes, so that the media type goes out as given (Fastify adds a charset to a string's; GeoJSON's type has no parameter).
    result: (d) => Buffer.from(d.riskIndex.exportPage.content),
    cache: CACHE,
    negotiated: true,
    headers: (d) => {
      const page = d.riskIndex.exportPage;
      return {
        'content-type': page.mediaType, 'content-disposition': `attachment; filename="${page.filename}"`,
        ...(page.nextUrl ? { link: `<${page.nextUrl}>; rel="next"` } : {}), ...filterHeader(d),
      };
    },
    docs: {
      description: `No authentication; the same area parameters, validation and limits as the other Risk Index paths. ${EXPORTS[data].holds}. `
        + 'GeoJSON per RFC 7946 (a FeatureCollection, longitude first, rings closed and counter-clockwise, no `crs`) with the foreign members '
        + '`numberMatched` (rows over every page), `numberReturned`, `links` (`rel: next`) and `filter` (the crash filter applied, or null); CSV per RFC 4180 (UTF-8, a header row, CRLF, '
        + 'numbers unlocalised, empty for null, text that begins with `=`, `+`, `-`, `@`, tab or CR prefixed with `\'` so that no spreadsheet runs it). '
        + `Pages of ${EXPORTS[data].rows}: while more follow, the Link header (rel="next") and the GeoJSON \`links\` give the next page's URL, `
        + 'so nothing is cut silently. GraphQL: `riskIndex { exports { ... } }` links these URLs; `exportPage` gives the same text.',
      query: {
        ...queryDocs(false, true),
        format: { type: 'string', enum: ['geojson', 'csv'], description: 'geojson or csv; without it, the Accept header chooses (text/csv, else GeoJSON)' },
        limit: { type: 'integer', minimum: 1, maximum: RISK_EXPORT_PAGE[data].max, default: RISK_EXPORT_PAGE[data].default, description: `Rows of this page` },
        after: { type: 'string', description: 'Cursor of the previous page (the Link header rel="next" carries it)' },
      },
      responseContent: {
        'application/geo+json': { type: 'object', description: 'RFC 7946 FeatureCollection', required: ['type', 'features'], properties: { type: { const: 'FeatureCollection' }, numberMatched: { type: 'integer' }, numberReturned: { type: 'integer' }, links: { type: 'array' }, filter: appliedFilterSchema, features: { type: 'array' } } },
        'text/csv': { type: 'string', description: 'RFC 4180 CSV with a header row' },
      },
      responseHeaders: {
        Link: linkHeaderDoc,
        'Content-Disposition': { description: `attachment; filename="risk-index-${data}.geojson" (or .csv)`, schema: { type: 'string' } },
        ...filterHeaderDoc,
      },
      problems: { 422: TOO_COMPLEX, 503: BUSY },
    },
  }));
}

/** `GET /riskIndex/v1/map/layers`: the report's `mapLayers` field (GeoJSON text), what the interactive map draws. */
const mapLayersRoute = typedRoute(RiskIndexMapLayers, {
  method: 'GET', path: RISK_MAP_LAYERS_PATH, operationId: 'mapLayers', summary: 'GeoJSON layers of the interactive map: search area, counties, major places, H3 cells with their figures',
  tag: 'Risk Index', scope: null,
  variables: (req) => variables(req, false),
  result: (d) => d.riskIndex.mapLayers,
  headers: (d) => ({ 'content-type': 'application/geo+json; charset=utf-8', ...filterHeader(d) }),
  cache: CACHE,
  docs: {
    description: 'No authentication; the same validation and limits as the other Risk Index paths. One RFC 7946 FeatureCollection whose features carry a `layer` property: '
      + '`area` (the search area), `county` (Census county boundaries clipped to a box around the area), `place` (places of 100,000 people or more, GeoNames) and '
      + '`cell` (H3 cells: `h3`, `resolution`, `index`, `fatalCrashes`, `fatalities`, `fatalCrashesPerKm2Year`, `fatalitiesPerKm2Year`). '
      + `The page that draws them: [${RISK_PREFIX}/map/view](${RISK_MAP_VIEW_EXAMPLE}). GraphQL: the \`mapLayers\` field of \`riskIndex\`.`,
    query: queryDocs(false),
    response: mapLayersSchema,
    responseContentType: 'application/geo+json',
    responseHeaders: filterHeaderDoc,
    problems: { 422: TOO_COMPLEX, 503: BUSY },
  },
});

/** What a data set path's operation answers: the area, and the FARS page when it selects farsInfo. */
interface DataSetAnswer extends Evaluated { riskIndex: Evaluated['riskIndex'] & { farsInfo?: RestFarsInfoFragment } }

/** `GET /riskIndex/v1/{name}`: `riskIndex` with the area and the data sets that its operation selects. */
function dataSetRoute<Data extends DataSetAnswer & Record<string, unknown>>(
  name: 'all' | DataSet, operation: RestOperation<Data>, selected: readonly Extract<keyof Data['riskIndex'], DataSet>[],
  summary: string,
): RestRoute {
  const sets: readonly DataSet[] = selected;
  const withLimit = sets.includes('farsInfo');
  const path = `${RISK_PREFIX}/${name}`;
  return typedRoute(operation, {
    method: 'GET', path, operationId: name, summary, tag: 'Risk Index', scope: null,
    variables: (req) => variables(req, withLimit),
    result: (d) => d.riskIndex,
    // Real-time traffic is live: never cached.
    cache: sets.includes('realtimeTraffic') ? 'no-store' : CACHE,
    ...(withLimit ? {
      headers: (d: Data, req: RestRequest): Record<string, string> => {
        const pageInfo = d.riskIndex.farsInfo?.pageInfo;
        return pageInfo?.hasNextPage && pageInfo.endCursor ? { link: nextLink(path, req, pageInfo.endCursor) } : {};
      },
    } : {}),
    docs: {
      description: 'No authentication. The response carries `area` (coverage, H3 resolution, cells touched), `filter` (the crash filter applied, or null) '
        + 'and the data set(s). The crash filter parameters keep the crashes they match in every count, record, summary and cell; riskInfo.index, its '
        + 'rate, smoothedRate and credibility, and the cells\' indices stay those of every crash (docs/risk-index.md, "Filters"). '
        + 'Outside California and Illinois: 200 with empty data sets and `area.outsideCoverage: true`. See docs/risk-index.md.',
      query: queryDocs(withLimit),
      problems: { 422: TOO_COMPLEX, 503: BUSY },
      ...(withLimit ? { responseHeaders: { Link: linkHeaderDoc } } : {}),
      response: answer({ area: areaSchema, filter: appliedFilterSchema, ...Object.fromEntries(sets.map((s) => [s, DATA_SET_SCHEMAS[s]])) }),
    },
  });
}

/** The Risk Index GET paths: public, each running `riskIndex` with only its data sets selected, and the map. */
export const riskRoutes: readonly RestRoute[] = [
  dataSetRoute('all', RiskIndexAll, ['riskInfo', 'accidentSummary', 'farsInfo', 'realtimeTraffic', 'historicalTraffic'],
    'Every data set for a search area'),
  dataSetRoute('riskInfo', RiskIndexRiskInfo, ['riskInfo'],
    '0-100 road risk index of the area, its distribution and riskiest H3 cells'),
  dataSetRoute('accidentSummary', RiskIndexAccidentSummary, ['accidentSummary'],
    'Crash counts by severity, year, month, hour of week, weather, light and road class'),
  dataSetRoute('farsInfo', RiskIndexFarsInfo, ['farsInfo'],
    'Fatal crash records (NHTSA FARS accident.csv layout, codes decoded)'),
  dataSetRoute('realtimeTraffic', RiskIndexRealtimeTraffic, ['realtimeTraffic'],
    'Latest realtime traffic observations, else the current hour of the historical profile'),
  dataSetRoute('historicalTraffic', RiskIndexHistoricalTraffic, ['historicalTraffic'],
    'Speed and volume by hour of week'),
  mapRoute, mapLayersRoute, ...exportRoutes(), ...batchRoutes,
];
