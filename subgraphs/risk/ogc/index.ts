/**
 * OGC API - Features (Part 1: core, GeoJSON, OpenAPI 3.0) at /riskIndex/v1/ogc: the fatal crashes and the
 * Risk Index cells as collections that QGIS, ArcGIS and GDAL's OAPIF driver add as layers. Public, like
 * the rest of the Risk Index; the features come from its export paths (items.ts). Served as pages of the
 * risk area: it has its own OpenAPI document (`/api`), so its paths are not in /openapi.json.
 */
import { cellToLatLng, getResolution, isValidCell } from 'h3-js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RISK_REST_PREFIX, type RiskExportData } from '../rules.ts';
import { AppError } from '../../platform/errors.ts';
import { crashFilterFromQuery } from '../filter/crash-filter.ts';
import { CELL_RESOLUTION, COVERAGE_BBOX, readItems, type Feature } from './items.ts';
import { ogcOpenApi } from './openapi.ts';
import { OgcError, parseBbox, parseDatetime, parseLimit, type Bbox } from './params.ts';

export const OGC_PATH = `${RISK_REST_PREFIX}/ogc`;

const GEOJSON = 'application/geo+json';
const OPENAPI = 'application/vnd.oai.openapi+json;version=3.0';
const CONFORMANCE = ['core', 'geojson', 'oas30'].map((c) => `http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/${c}`);

const COLLECTIONS: Record<RiskExportData, { title: string; description: string }> = {
  crashes: {
    title: 'Fatal crashes (NHTSA FARS)',
    description: 'One point per fatal crash in California and Illinois with its FARS record (codes decoded); datetime filters on its local date and time.',
  },
  cells: {
    title: 'Risk Index H3 cells',
    description: 'The resolution-7 H3 cells (about 5 km² each) overlapping the bbox, as polygons with their 0-100 index and crash counts; '
      + 'a large bbox (a state) is answered page by page (next links), each page within the Risk Index\'s cell budget.',
  },
};

type Query = Record<string, string | undefined>;

const baseUrl = (request: FastifyRequest) => `${request.protocol}://${request.host}${OGC_PATH}`;

function collectionOf(id: string): RiskExportData {
  if (id === 'crashes' || id === 'cells') return id;
  throw new OgcError(404, 'NotFound', `collection ${JSON.stringify(id)} does not exist: crashes or cells`);
}

function checkFormat(query: Query) {
  if (query.f !== undefined && query.f !== 'json') throw new OgcError(400, 'InvalidParameterValue', 'f must be json');
}

const collection = (base: string, id: RiskExportData) => ({
  id, ...COLLECTIONS[id], itemType: 'feature',
  extent: { spatial: { bbox: [COVERAGE_BBOX], crs: 'http://www.opengis.net/def/crs/OGC/1.3/CRS84' } },
  crs: ['http://www.opengis.net/def/crs/OGC/1.3/CRS84'],
  links: [
    { rel: 'self', type: 'application/json', href: `${base}/collections/${id}` },
    { rel: 'items', type: GEOJSON, href: `${base}/collections/${id}/items` },
  ],
});

/** The `items` page: features, their paging links and the OGC foreign members. */
async function items(app: FastifyInstance, request: FastifyRequest, data: RiskExportData, query: Query) {
  const bbox = parseBbox(query.bbox);
  const limit = parseLimit(query.limit);
  const datetime = parseDatetime(query.datetime);
  if (datetime && data === 'cells') throw new OgcError(400, 'InvalidParameterValue', 'datetime applies to crashes only: cells have no time');
  const filter = crashFilterOf(query);
  const page = await readItems(app, { ip: request.ip, data, bbox: bbox ?? COVERAGE_BBOX, limit, datetime, filter, after: query.cursor ?? null });
  const href = `${baseUrl(request)}/collections/${data}/items`;
  const keep = new URLSearchParams(Object.entries(query).filter(([k, v]) => k !== 'cursor' && v !== undefined) as [string, string][]);
  const next = page.after ? new URLSearchParams([...keep, ['cursor', page.after]]) : null;
  return {
    type: 'FeatureCollection',
    timeStamp: new Date().toISOString(),
    ...(page.matched === null ? {} : { numberMatched: page.matched }),
    numberReturned: page.features.length,
    links: [
      { rel: 'self', type: GEOJSON, href: `${href}?${keep}` },
      { rel: 'collection', type: 'application/json', href: `${baseUrl(request)}/collections/${data}` },
      ...(next ? [{ rel: 'next', type: GEOJSON, href: `${href}?${next}` }] : []),
    ],
    features: page.features.map((f) => (data === 'crashes' ? crashFeature(f) : f)),
  };
}

/** The Risk Index's crash filter (years, hours, ...: docs/risk-index.md), its 400 as an OGC exception. */
function crashFilterOf(query: Query) {
  try {
    return crashFilterFromQuery((name) => query[name]);
  } catch (error) {
    if (error instanceof AppError) throw new OgcError(400, 'InvalidParameterValue', error.message);
    throw error;
  }
}

/** A crash's id carries its place (`YEAR-ST_CASE_lon_lat`): one crash is found in the cell that holds it. */
const crashFeature = (f: Feature): Feature => {
  const [lon, lat] = f.geometry.coordinates as [number, number];
  return { ...f, id: `${f.id}_${lon}_${lat}` };
};

const CRASH_ID = /^(\d{4}-\d{1,7})_(-?\d{1,3}(?:\.\d+)?)_(-?\d{1,2}(?:\.\d+)?)$/;
const CELL_ID = /^[0-9a-f]{15}$/;
const MARGIN = 1e-6;

async function feature(app: FastifyInstance, request: FastifyRequest, data: RiskExportData, id: string) {
  const missing = new OgcError(404, 'NotFound', `feature ${JSON.stringify(id)} does not exist in ${data}`);
  let box: Bbox;
  if (data === 'crashes') {
    const m = CRASH_ID.exec(id);
    if (!m) throw missing;
    const [lon, lat] = [Number(m[2]), Number(m[3])];
    if (Math.abs(lon) > 180 || Math.abs(lat) > 90) throw missing;
    box = [lon - MARGIN, lat - MARGIN, lon + MARGIN, lat + MARGIN];
  } else {
    // A cell of the collection is a resolution-7 cell: the one around its center.
    if (!CELL_ID.test(id) || !isValidCell(id) || getResolution(id) !== CELL_RESOLUTION) throw missing;
    const [lat, lon] = cellToLatLng(id);
    box = [lon - MARGIN, lat - MARGIN, lon + MARGIN, lat + MARGIN];
  }
  const page = await readItems(app, { ip: request.ip, data, bbox: box, limit: 10_000, datetime: null, filter: null, after: null });
  const found = page.features.map((f) => (data === 'crashes' ? crashFeature(f) : f)).find((f) => f.id === id);
  if (!found) throw missing;
  return found;
}

function sendError(reply: FastifyReply, error: OgcError & { retryAfter?: unknown }) {
  if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
  return reply.code(error.status).type('application/json').send({ code: error.code, description: error.message });
}

/** The OGC routes (SubgraphDefinition.pages of the risk area). */
export const ogcPages = () => async (app: FastifyInstance) => {
  const route = (path: string, type: string, answer: (request: FastifyRequest, query: Query, params: Record<string, string>) => Promise<unknown> | unknown) => {
    app.get(`${OGC_PATH}${path}`, async (request, reply) => {
      try {
        const query = request.query as Query;
        checkFormat(query);
        const body = await answer(request, query, request.params as Record<string, string>);
        // Bytes, so that the media type goes out as given (Fastify adds a charset to a string's).
        return reply.type(type).header('cache-control', 'no-cache').send(Buffer.from(JSON.stringify(body)));
      } catch (error) {
        if (error instanceof OgcError) return sendError(reply, error);
        throw error;
      }
    });
  };
  route('', 'application/json', (request) => {
    const base = baseUrl(request);
    return {
      title: 'Risk Index - OGC API - Features',
      description: 'Fatal crashes (NHTSA FARS) and Risk Index H3 cells of California and Illinois.',
      links: [
        { rel: 'self', type: 'application/json', href: base },
        { rel: 'service-desc', type: OPENAPI, href: `${base}/api` },
        { rel: 'conformance', type: 'application/json', href: `${base}/conformance` },
        { rel: 'data', type: 'application/json', href: `${base}/collections` },
      ],
    };
  });
  route('/api', OPENAPI, (request) => ogcOpenApi(baseUrl(request)));
  route('/conformance', 'application/json', () => ({ conformsTo: CONFORMANCE }));
  route('/collections', 'application/json', (request) => {
    const base = baseUrl(request);
    return {
      links: [{ rel: 'self', type: 'application/json', href: `${base}/collections` }],
      collections: (['crashes', 'cells'] as const).map((id) => collection(base, id)),
    };
  });
  route('/collections/:collectionId', 'application/json', (request, _q, params) => collection(baseUrl(request), collectionOf(params.collectionId)));
  route('/collections/:collectionId/items', GEOJSON, (request, query, params) => items(app, request, collectionOf(params.collectionId), query));
  route('/collections/:collectionId/items/:featureId', GEOJSON,
    (request, _q, params) => feature(app, request, collectionOf(params.collectionId), params.featureId));
};
