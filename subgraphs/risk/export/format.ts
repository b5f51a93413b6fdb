import { badInput } from '../../platform/errors.ts';
import { queryString } from '../../platform/rest/body.ts';
import type { RestRequest } from '../../platform/rest/types.ts';
import type { RiskExportFormat } from '../rules.ts';

/** `format`, else the Accept header: CSV when it names text/csv before application/geo+json; GeoJSON otherwise. */
export function exportFormat(req: RestRequest): RiskExportFormat {
  const format = queryString(req, 'format')?.trim().toLowerCase();
  if (format === 'geojson' || format === 'csv') return format;
  if (format) throw badInput(`format must be geojson or csv; got ${JSON.stringify(format)}`, 'format');
  const accept = String(req.headers.accept ?? '').toLowerCase();
  const csv = accept.indexOf('text/csv'), geojson = accept.indexOf('application/geo+json');
  return csv >= 0 && (geojson < 0 || csv < geojson) ? 'csv' : 'geojson';
}
