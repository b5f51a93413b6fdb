/**
 * The features of a collection, read through the Risk Index's own export paths (injected into the same
 * gateway), so that an OGC request meets the same area budget, answer cache and in-flight bound as REST.
 */
import type { FastifyInstance } from 'fastify';
import { RISK_EXPORT_PAGE, RISK_REST_PREFIX, type RiskExportData } from '../rules.ts';
import { crashFilterParams, type CrashFilter } from '../filter/crash-filter.ts';
import { bboxWkt, OgcError, within, type Bbox, type Interval } from './params.ts';

export interface Feature { type: 'Feature'; id: string; geometry: { type: string; coordinates: unknown }; properties: Record<string, unknown> }
interface ExportAnswer { features: Feature[]; numberMatched: number; links: { rel: string; href: string }[] }

/** Rows one items request may read from the exports (datetime skips rows): a bound on its work before it starts. */
export const OGC_SCAN_ROWS = 20_000;
/** The area of an items request without bbox: a box around the covered states, California and Illinois. */
export const COVERAGE_BBOX: Bbox = [-124.5, 32.5, -87.0, 42.6];

/** The OGC exception code of a REST problem's status (422: the area budget; 503: the in-flight bound). */
const codeOf = (status: number) =>
  ({ 429: 'TooManyRequests', 503: 'ServiceUnavailable' })[status] ?? (status < 500 ? 'InvalidParameterValue' : 'ServerError');

/** One export page: the REST problem becomes an OGC exception with the same status. */
async function exportPage(app: FastifyInstance, q: ItemsQuery, wkt: string, first: number, after: string | null) {
  const query = new URLSearchParams({ geometry: wkt, format: 'geojson', limit: String(first), ...(after ? { after } : {}) });
  for (const [name, value] of crashFilterParams(q.filter)) query.set(name, value);
  // The caller's address goes along: the rate limit counts the caller, not the gateway.
  const res = await app.inject({ method: 'GET', url: `${RISK_REST_PREFIX}/export/${q.data}?${query}`, remoteAddress: q.ip });
  if (res.statusCode !== 200) {
    const problem = res.json<{ detail?: string; message?: string; title?: string }>();
    const error = new OgcError(res.statusCode, codeOf(res.statusCode), problem.detail ?? problem.message ?? problem.title ?? 'error');
    throw Object.assign(error, { retryAfter: res.headers['retry-after'] });
  }
  const answer = res.json<ExportAnswer>();
  const next = answer.links.find((l) => l.rel === 'next')?.href;
  return { ...answer, after: next ? new URL(next, 'http://x').searchParams.get('after') : null };
}

const localTime = (f: Feature) => String(f.properties.localDateTime ?? '');
const inside = (f: Feature, [minx, miny, maxx, maxy]: Bbox) => {
  const [lon, lat] = f.geometry.coordinates as [number, number];
  return lon >= minx && lon <= maxx && lat >= miny && lat <= maxy;
};

export interface ItemsQuery {
  ip: string; data: RiskExportData; bbox: Bbox; limit: number; datetime: Interval | null; filter: CrashFilter | null; after: string | null;
}

/**
 * At most `limit` features behind `after` (an export cursor). Crashes are kept when inside the bbox (the
 * export holds the crashes of the H3 cells that cover it) and within datetime; they come most recent
 * first, so paging stops once they are older than its start. `after` is null on the last page.
 */
export async function readItems(app: FastifyInstance, q: ItemsQuery) {
  const wkt = bboxWkt(q.bbox);
  const features: Feature[] = [];
  let after = q.after, scanned = 0, matched: number | null = null;
  do {
    const page = await exportPage(app, q, wkt, Math.min(RISK_EXPORT_PAGE[q.data].max, q.limit - features.length), after);
    scanned += page.features.length;
    after = page.after;
    if (q.data === 'cells') {
      features.push(...page.features);
      matched = page.numberMatched;
      continue;
    }
    features.push(...page.features.filter((f) => inside(f, q.bbox) && (!q.datetime || within(localTime(f), q.datetime))));
    const last = page.features.at(-1);
    if (q.datetime?.start && last && localTime(last) < q.datetime.start) after = null;
  } while (after && features.length < q.limit && scanned < OGC_SCAN_ROWS);
  return { features, after, matched };
}
