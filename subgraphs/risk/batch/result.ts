import { rewind } from '@turf/turf';
import { wktToGeoJSON } from '@terraformer/wkt';
import type { Geometry } from 'geojson';
import { csvText } from '../export/csv.ts';
import type { RiskExportFormat } from '../rules.ts';
import type { BatchStatus } from './entities.ts';
import type { BatchResultRow } from './store.ts';

/** The columns of a result, each row's: its id as given, the figures (null when not scored) and why not. */
export const BATCH_RESULT_FIELDS = ['id', 'index', 'crashes', 'fatalities', 'areaKm2', 'error'] as const;

const MEDIA_TYPES: Record<RiskExportFormat, string> = {
  geojson: 'application/geo+json', csv: 'text/csv; charset=utf-8; header=present',
};

/** Why a row has no figures although it had no fault of its own: the job ended before it. */
const unscored = (status: BatchStatus, error: string | null) => (status === 'CANCELLED'
  ? 'not scored: the batch was cancelled' : `not scored: the batch failed${error ? ` (${error})` : ''}`);

const properties = (r: BatchResultRow, status: BatchStatus, jobError: string | null) => ({
  id: r.rowId, index: r.riskIndex, crashes: r.crashes, fatalities: r.fatalities, areaKm2: r.areaKm2,
  error: r.error ?? (r.done ? null : unscored(status, jobError)),
});

/** The row's own geometry, RFC 7946 (rings counter-clockwise); null when it had none that parses. */
function geometryOf(wkt: string | null): Geometry | null {
  if (!wkt) return null;
  try {
    return rewind(wktToGeoJSON(wkt) as never) as Geometry;
  } catch {
    return null;
  }
}

/** A finished job's result file: every input row, in input order. */
export function renderBatchResult(
  rows: BatchResultRow[], format: RiskExportFormat, status: BatchStatus, jobError: string | null, id: string,
) {
  const records = rows.map((r) => properties(r, status, jobError));
  const content = format === 'csv'
    ? csvText(BATCH_RESULT_FIELDS, records)
    : JSON.stringify({
      type: 'FeatureCollection',
      features: rows.map((r, i) => ({
        type: 'Feature', geometry: geometryOf(r.wkt), properties: records[i],
      })),
    });
  return { mediaType: MEDIA_TYPES[format], filename: `risk-batch-${id}.${format}`, content };
}
