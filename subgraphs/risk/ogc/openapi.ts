/** The OGC API's own OpenAPI 3.0 document (its `service-desc`), apart from the gateway's /openapi.json. */
import { crashFilterQueryDocs } from '../filter/rest-docs.ts';
import { OGC_LIMIT } from './params.ts';

const param = (name: string, description: string, schema: Record<string, unknown>, where = 'query', required = false) =>
  ({ name, in: where, required, description, schema, ...(where === 'query' ? { style: 'form', explode: false } : {}) });

const json = (description: string, type = 'application/json') => ({ description, content: { [type]: { schema: { type: 'object' } } } });
const exception = json('OGC API exception: { code, description }');
const errors = { 400: exception, 404: exception, 422: exception, 503: exception };
const get = (operationId: string, summary: string, ok: ReturnType<typeof json>, parameters: unknown[] = []) =>
  ({ get: { operationId, summary, tags: ['OGC API - Features'], parameters, responses: { 200: ok, ...errors } } });

const collectionId = param('collectionId', 'crashes or cells', { type: 'string', enum: ['crashes', 'cells'] }, 'path', true);
const f = param('f', 'json (the only format; GeoJSON for features)', { type: 'string', enum: ['json'] });

/** The document, its server the gateway's base URL as the caller reached it. */
export const ogcOpenApi = (server: string) => ({
  openapi: '3.0.3',
  info: {
    title: 'Risk Index - OGC API - Features', version: '1.0.0',
    description: 'NHTSA FARS fatal crashes (California and Illinois) and the Risk Index H3 cells as OGC API - Features collections. No authentication; see docs/analysts.md.',
  },
  servers: [{ url: server }],
  paths: {
    '/': get('landing', 'Landing page', json('Links to the API, conformance and collections'), [f]),
    '/api': get('api', 'This OpenAPI 3.0 document', json('OpenAPI 3.0', 'application/vnd.oai.openapi+json;version=3.0')),
    '/conformance': get('conformance', 'Conformance classes', json('conformsTo'), [f]),
    '/collections': get('collections', 'The collections', json('collections and links'), [f]),
    '/collections/{collectionId}': get('collection', 'One collection', json('Its extent and links'), [collectionId, f]),
    '/collections/{collectionId}/items': get('items', 'Features of a collection', json('GeoJSON FeatureCollection', 'application/geo+json'), [
      collectionId,
      param('bbox', 'minx,miny,maxx,maxy in WGS 84 longitude/latitude; minx > maxx (antimeridian) is refused. Default: California and Illinois.',
        { type: 'array', minItems: 4, maxItems: 4, items: { type: 'number' } }),
      param('limit', 'Features of the page (fewer may come back while a next link follows)',
        { type: 'integer', minimum: 1, maximum: OGC_LIMIT.max, default: OGC_LIMIT.default }),
      param('datetime', 'crashes: a date, date-time or interval a/b (.. for an open end; ../.. is refused), local to the crash', { type: 'string' }),
      ...Object.entries(crashFilterQueryDocs()).map(([name, { description, ...schema }]) => param(name, `The crash filter (docs/risk-index.md): ${description}`, schema)),
      param('cursor', 'Opaque position given by a next link', { type: 'string' }),
      f,
    ]),
    '/collections/{collectionId}/items/{featureId}': get('feature', 'One feature', json('GeoJSON Feature', 'application/geo+json'), [
      collectionId, param('featureId', 'The feature id as items gives it', { type: 'string' }, 'path', true), f,
    ]),
  },
});
