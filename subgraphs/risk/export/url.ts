import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { RISK_REST_PREFIX, type RiskExportData, type RiskExportFormat } from '../rules.ts';
import { badInput } from '../../platform/errors.ts';
import { crashFilterParams, type CrashFilter } from '../filter/crash-filter.ts';

/** The search area of a Risk Index request, as its REST query gives it. */
export interface RiskArea {
  wkt: string;
  radius?: number | null;
  queryMethod?: string | null;
  /** The H3 resolution asked (5, 7, 9); absent: chosen for the area. A plain parameter on every page, not part of the token. */
  resolution?: number | null;
}

/** Largest area text a token may inflate to: well above any WKT the gateway's 16 KiB URLs can carry. */
const MAX_AREA_JSON = 256 * 1024;

/**
 * The area as one opaque query parameter (`area`): its JSON, deflated, base64url. A next-page link
 * repeating a state's outline verbatim would be as long as the request URL (up to the gateway's 16 KiB),
 * over the 16 KiB that common HTTP clients accept for all of a response's headers; deflated, a third of it.
 */
export const encodeRiskArea = (area: RiskArea): string =>
  deflateRawSync(JSON.stringify([area.wkt, area.radius ?? null, area.queryMethod ?? null])).toString('base64url');

/** Decodes encodeRiskArea's token; anything else is a 400 naming `area`. */
export function decodeRiskArea(token: string): RiskArea {
  const invalid = () => badInput('area is not an area token this API made (take the next page link as given)', 'area');
  if (!/^[A-Za-z0-9_-]+$/.test(token)) throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(inflateRawSync(Buffer.from(token, 'base64url'), { maxOutputLength: MAX_AREA_JSON }).toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(parsed) || parsed.length !== 3 || typeof parsed[0] !== 'string'
    || (parsed[1] !== null && typeof parsed[1] !== 'number') || (parsed[2] !== null && typeof parsed[2] !== 'string')) throw invalid();
  return { wkt: parsed[0], radius: parsed[1] as number | null, queryMethod: parsed[2] as string | null };
}

/**
 * The REST URL (path and query, relative to the gateway) of one export page of an area: the first
 * page names the area in plain parameters; a next page (`after`) by its token. The resolution asked and the
 * crash filter's parameters follow as given to the REST paths, on every page.
 */
export function riskExportUrl(
  data: RiskExportData, format: RiskExportFormat, area: RiskArea, filter: CrashFilter | null, page: { after?: string | null; limit?: number | null } = {},
): string {
  const query = new URLSearchParams();
  if (page.after) {
    query.set('area', encodeRiskArea(area));
  } else {
    query.set('geometry', area.wkt);
    if (area.radius != null) query.set('radius', String(area.radius));
    if (area.queryMethod) query.set('queryMethod', area.queryMethod);
  }
  if (area.resolution != null) query.set('resolution', String(area.resolution));
  for (const [name, value] of crashFilterParams(filter)) query.set(name, value);
  query.set('format', format);
  if (page.limit != null) query.set('limit', String(page.limit));
  if (page.after) query.set('after', page.after);
  return `${RISK_REST_PREFIX}/export/${data}?${query}`;
}
