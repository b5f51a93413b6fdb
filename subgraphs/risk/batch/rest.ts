import { AppError, badInput } from '../../platform/errors.ts';
import { answer, dateTime, int, nullable, num, str } from '../../platform/rest/components.ts';
import { queryString } from '../../platform/rest/body.ts';
import { found, typedRoute } from '../../platform/rest/operation.ts';
import type { RestRequest, RestRoute } from '../../platform/rest/types.ts';
import { exportFormat } from '../export/format.ts';
import { RISK_BATCH_MAX_BYTES, RISK_BATCH_MAX_QUEUED, RISK_BATCH_MAX_ROWS, RISK_REST_PREFIX } from '../rules.ts';
import { CancelRiskBatch, RiskBatch, RiskBatchResult, SubmitRiskBatch } from '../rest.generated.ts';
import { BATCH_RESULT_FIELDS } from './result.ts';

export const RISK_BATCHES_PATH = `${RISK_REST_PREFIX}/batches`;
const TAG = 'Risk Index batches';
const GEOJSON_TYPES = /^application\/(geo\+)?json\b/i;
const CSV_TYPE = /^text\/csv\b/i;

const batchSchema = answer({
  id: { type: 'string', format: 'uuid' },
  status: { type: 'string', enum: ['QUEUED', 'RUNNING', 'SUCCEEDED', 'FAILED', 'CANCELLED'] },
  total: { ...int, description: 'Input rows' }, processed: { ...int, description: 'Rows scored (or refused) so far' },
  progress: { ...num, minimum: 0, maximum: 1 }, failedRows: { ...int, description: 'Rows with an error so far' },
  error: nullable({ ...str, description: 'Why the job FAILED (its total budget passed)' }),
  createdAt: dateTime, startedAt: nullable(dateTime), finishedAt: nullable(dateTime),
  expiresAt: { ...dateTime, description: 'When the job and its result are deleted (7 days after submission)' },
}, { description: 'A batch scoring job' });

/** The input's format: `format`, else the body's media type (CSV, else GeoJSON FeatureCollection). */
function inputFormat(req: RestRequest): 'GEOJSON' | 'CSV' {
  const format = queryString(req, 'format')?.trim().toUpperCase();
  if (format === 'GEOJSON' || format === 'CSV') return format;
  if (format) throw badInput(`format must be geojson or csv; got ${JSON.stringify(format.toLowerCase())}`, 'format');
  const type = String(req.headers['content-type'] ?? '');
  if (CSV_TYPE.test(type)) return 'CSV';
  if (GEOJSON_TYPES.test(type)) return 'GEOJSON';
  throw new AppError('UNSUPPORTED_MEDIA_TYPE', `send the areas as application/geo+json or text/csv; got ${JSON.stringify(type)}`);
}

const idParam = { id: { type: 'string', description: 'The job\'s id (answered by POST /riskIndex/v1/batches)' } };
const NOT_FOUND = 'No such job of the caller\'s organisation (another organisation\'s, or one past its 7 days)';

const AREA_ROWS = 'RFC 4180 CSV with the header id,wkt,radius (radius may be empty)';
const AREA_FEATURES = 'each: an `id` property, an optional `radius` property in degrees, a geometry';
/** An RFC 7946 FeatureCollection, its features as `features` says. */
const featureCollection = (features: string) => ({
  type: 'object', description: 'RFC 7946 FeatureCollection', required: ['type', 'features'],
  properties: { type: { const: 'FeatureCollection' }, features: { type: 'array', description: features } },
});

/** `POST/GET/DELETE /riskIndex/v1/batches...`: batch scoring jobs, an organisation's, with a b2b token. */
export const batchRoutes: readonly RestRoute[] = [
  typedRoute(SubmitRiskBatch, {
    method: 'POST', path: RISK_BATCHES_PATH, operationId: 'submitRiskBatch', summary: 'Score many areas in one job: GeoJSON FeatureCollection or CSV of up to 10,000 areas',
    tag: TAG, scope: 'b2b', status: 202, rawBody: true,
    // The largest input and a little room for what a client adds (a trailing newline); the input's own size check is exact.
    bodyLimit: RISK_BATCH_MAX_BYTES + 1024,
    variables: (req) => ({ input: { format: inputFormat(req), content: req.rawBody ?? '' } }),
    result: (d) => d.submitRiskBatch,
    headers: (d) => ({ location: `${RISK_BATCHES_PATH}/${d.submitRiskBatch.id}` }),
    docs: {
      description: `A job of the caller's organisation: up to ${RISK_BATCH_MAX_ROWS.toLocaleString('en')} rows and ${RISK_BATCH_MAX_BYTES / 1024 / 1024} MB, as `
        + '`application/geo+json` (a FeatureCollection: each feature\'s `id` property, an optional `radius` property in degrees, its geometry) or '
        + '`text/csv` (the header `id,wkt,radius`, radius may be empty); `format=geojson|csv` overrides the media type. 202 with the job (QUEUED) and its '
        + '`Location`; poll it, then GET its `/result`. A row that cannot be scored (no id, bad geometry, over the search area budget) is that row\'s '
        + `\`error\` in the result, never the job's. At most ${RISK_BATCH_MAX_QUEUED} queued jobs per client (429 past them) and 2 running; `
        + 'the job runs beside the interactive Risk Index without taking its capacity. GraphQL: `submitRiskBatch`. See docs/analysts.md, "Batch scoring".',
      contentTypes: ['application/geo+json', 'text/csv'],
      requestBody: { description: 'A GeoJSON FeatureCollection, or CSV with the header id,wkt,radius' },
      requestContent: {
        'application/geo+json': featureCollection(AREA_FEATURES),
        'text/csv': { type: 'string', description: AREA_ROWS },
      },
      query: { format: { type: 'string', enum: ['geojson', 'csv'], description: 'The input\'s format, when the media type does not say it', example: 'csv' } },
      response: batchSchema,
      responseHeaders: { Location: { description: 'The job\'s URL', schema: str } },
      problems: { 413: `The body is over ${RISK_BATCH_MAX_BYTES} bytes`, 415: 'Neither GeoJSON nor CSV', 429: `${RISK_BATCH_MAX_QUEUED} jobs of the client are queued already` },
    },
  }),
  typedRoute(RiskBatch, {
    method: 'GET', path: `${RISK_BATCHES_PATH}/:id`, operationId: 'getRiskBatch', summary: 'A batch job\'s status and progress',
    tag: TAG, scope: 'b2b', cache: 'no-store',
    variables: (req) => ({ id: req.params.id }),
    result: (d, req) => found(d.riskBatch, 'batch', req.params.id),
    docs: {
      description: 'QUEUED, RUNNING (`processed` of `total`, committed as it goes), then SUCCEEDED, FAILED (`error`: its total budget passed) or CANCELLED. GraphQL: `riskBatch`.',
      params: idParam, response: batchSchema, problems: { 404: NOT_FOUND },
    },
  }),
  typedRoute(RiskBatchResult, {
    method: 'GET', path: `${RISK_BATCHES_PATH}/:id/result`, operationId: 'getRiskBatchResult', summary: 'A finished batch job\'s result as GeoJSON or CSV',
    tag: TAG, scope: 'b2b', cache: 'no-store', negotiated: true,
    variables: (req) => ({ id: req.params.id, format: exportFormat(req).toUpperCase() }),
    result: (d, req) => Buffer.from(found(d.riskBatch, 'batch', req.params.id).result.content),
    headers: (d) => ({
      'content-type': d.riskBatch!.result.mediaType, 'content-disposition': `attachment; filename="${d.riskBatch!.result.filename}"`,
    }),
    docs: {
      description: `Every input row in input order with ${BATCH_RESULT_FIELDS.map((f) => `\`${f}\``).join(', ')} (figures as riskInfo gives them: the 0-100 \`index\`, `
        + 'the fatal crashes and fatalities inside the area, its covered km²; `error` null when scored). GeoJSON: a FeatureCollection, each row\'s geometry '
        + '(null when it had none); CSV per RFC 4180 with text that begins with `=`, `+`, `-`, `@`, tab or CR prefixed with `\'`. '
        + '409 until the job has finished; a cancelled or failed job\'s unscored rows say why. GraphQL: `riskBatch { result(format:) }`.',
      params: idParam,
      query: { format: { type: 'string', enum: ['geojson', 'csv'], description: 'geojson or csv; without it, the Accept header chooses (text/csv, else GeoJSON)' } },
      responseContent: {
        'application/geo+json': featureCollection(`each: a row's geometry, ${BATCH_RESULT_FIELDS}`),
        'text/csv': { type: 'string', description: `RFC 4180 CSV with the header ${BATCH_RESULT_FIELDS.join(',')}` },
      },
      problems: { 404: NOT_FOUND, 409: 'The job has not finished' },
    },
  }),
  typedRoute(CancelRiskBatch, {
    method: 'DELETE', path: `${RISK_BATCHES_PATH}/:id`, operationId: 'cancelRiskBatch', summary: 'Cancel a queued or running batch job',
    tag: TAG, scope: 'b2b',
    variables: (req) => ({ id: req.params.id }),
    result: (d) => d.cancelRiskBatch,
    docs: {
      description: 'The job, CANCELLED (rows scored before it keep their figures); one that finished first is 409; one already cancelled is answered as it is. GraphQL: `cancelRiskBatch`.',
      params: idParam, response: batchSchema, problems: { 404: NOT_FOUND, 409: 'The job has finished already' },
    },
  }),
];
