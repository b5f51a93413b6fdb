import { geojsonToWKT } from '@terraformer/wkt';
import { parse } from 'csv-parse/sync';
import type { Geometry } from 'geojson';
import { AppError, badInput } from '../../platform/errors.ts';
import { RISK_BATCH_CSV_COLUMNS, RISK_BATCH_MAX_BYTES, RISK_BATCH_MAX_ROWS } from '../rules.ts';

export const BATCH_INPUT_FORMATS = ['GEOJSON', 'CSV'] as const;
export type BatchInputFormat = (typeof BATCH_INPUT_FORMATS)[number];

/** One input row as stored: what the runner scores, or (`error` set) what it reports as is. */
export interface BatchInputRow {
  rowId: string;
  wkt: string | null;
  radius: number | null;
  error: string | null;
}

const MAX_ID_LENGTH = 200;
const MAX_RADIUS = 5;

/**
 * A row's fault is the row's (its `error`), never the job's: the job fails only on what makes the
 * whole input unreadable (not a FeatureCollection, a CSV without its header) or too large.
 */
function row(rawId: unknown, wkt: () => string | null, rawRadius: unknown): BatchInputRow {
  const faults: string[] = [];
  const id = typeof rawId === 'string' || typeof rawId === 'number' ? String(rawId) : '';
  if (id === '') faults.push('id is required (a string or a number)');
  if (id.length > MAX_ID_LENGTH) faults.push(`id is longer than ${MAX_ID_LENGTH} characters`);
  let radius: number | null = null;
  if (rawRadius !== undefined && rawRadius !== null && rawRadius !== '') {
    radius = typeof rawRadius === 'number' ? rawRadius : Number(rawRadius);
    if (!Number.isFinite(radius) || radius < 0 || radius > MAX_RADIUS) {
      faults.push(`radius must be a number of degrees from 0 to ${MAX_RADIUS}`);
      radius = null;
    }
  }
  let text: string | null = null;
  try {
    text = wkt();
    if (!text) faults.push('the geometry is missing');
  } catch (error) {
    faults.push(`the geometry is not valid GeoJSON: ${(error as Error).message}`.slice(0, 300));
  }
  const error = faults.length ? faults.join('; ') : null;
  return { rowId: id.slice(0, MAX_ID_LENGTH), wkt: text, radius, error };
}

function tooManyRows(count: number): AppError {
  return badInput(`a batch holds at most ${RISK_BATCH_MAX_ROWS} rows; got ${count}`, 'content',
    { max: RISK_BATCH_MAX_ROWS, got: count });
}

interface FeatureLike {
  id?: unknown;
  geometry?: Geometry | null;
  properties?: Record<string, unknown> | null;
}

/** A GeoJSON FeatureCollection: a row per feature, `properties.id` (else the feature's id), `properties.radius`. */
function geojsonRows(content: string): BatchInputRow[] {
  let doc: { type?: unknown; features?: unknown };
  try {
    doc = JSON.parse(content) as typeof doc;
  } catch {
    throw badInput('the content is not JSON: send a GeoJSON FeatureCollection', 'content');
  }
  if (doc?.type !== 'FeatureCollection' || !Array.isArray(doc.features)) {
    throw badInput('the content must be a GeoJSON FeatureCollection', 'content');
  }
  if (doc.features.length > RISK_BATCH_MAX_ROWS) throw tooManyRows(doc.features.length);
  return (doc.features as FeatureLike[]).map((f) => {
    const feature: FeatureLike = f && typeof f === 'object' ? f : {};
    const properties = feature.properties && typeof feature.properties === 'object' ? feature.properties : {};
    const wkt = () => (feature.geometry ? geojsonToWKT(feature.geometry) : null);
    return row(properties.id ?? feature.id, wkt, properties.radius);
  });
}

/**
 * CSV (RFC 4180, UTF-8) with the header `id,wkt,radius` (radius may be left out); a record of the
 * wrong width is that row's fault.
 */
function csvRows(content: string): BatchInputRow[] {
  let records: string[][];
  try {
    const options = { bom: true, skip_empty_lines: true, relax_column_count: true, to: RISK_BATCH_MAX_ROWS + 2 };
    records = parse(content, options) as string[][];
  } catch (error) {
    throw badInput(`the content is not valid CSV: ${(error as Error).message}`.slice(0, 300), 'content');
  }
  const [header = [], ...body] = records;
  const columns = header.map((c) => c.trim().toLowerCase());
  const expected = RISK_BATCH_CSV_COLUMNS;
  if (columns.join(',') !== expected.join(',') && columns.join(',') !== expected.slice(0, 2).join(',')) {
    const got = JSON.stringify(header.join(','));
    throw badInput(`the CSV header must be ${expected.join(',')} (radius may be left out); got ${got}`, 'content');
  }
  if (body.length > RISK_BATCH_MAX_ROWS) throw tooManyRows(body.length);
  return body.map((r) => {
    const width = r.length === columns.length ? null
      : `the record has ${r.length} fields, the header ${columns.length}`;
    const parsed = row(r[0], () => r[1]?.trim() || null, r[2]);
    if (!width) return parsed;
    return { ...parsed, wkt: null, error: parsed.error ? `${width}; ${parsed.error}` : width };
  });
}

/** The rows of a job's input, checked for size before it is read. */
export function parseBatchInput(format: BatchInputFormat, content: string): BatchInputRow[] {
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > RISK_BATCH_MAX_BYTES) {
    throw new AppError('PAYLOAD_TOO_LARGE', `a batch's input is at most ${RISK_BATCH_MAX_BYTES} bytes; got ${bytes}`,
      { field: 'content', max: RISK_BATCH_MAX_BYTES, got: bytes });
  }
  const rows = format === 'CSV' ? csvRows(content) : geojsonRows(content);
  if (rows.length === 0) throw badInput('the batch holds no rows', 'content');
  return rows;
}
