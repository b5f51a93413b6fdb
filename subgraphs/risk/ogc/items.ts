/**
 * The features of a collection, read through the Risk Index's own export paths (injected into the same
 * gateway), so that an OGC request meets the same area budget, answer cache and in-flight bound as REST.
 */
import type { FastifyInstance } from 'fastify';
import { cellToLatLng } from 'h3-js';
import { decodeCursor, encodeCursor } from '../../platform/cursor.ts';
import { AppError } from '../../platform/errors.ts';
import { stateBoundaries } from '../geometry/coverage.ts';
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

/** One export page: the REST problem becomes an OGC exception with the same status. Cells at resolution 7. */
async function exportPage(app: FastifyInstance, q: ItemsQuery, wkt: string, first: number, after: string | null) {
  const query = new URLSearchParams({ geometry: wkt, format: 'geojson', limit: String(first), ...(after ? { after } : {}) });
  if (q.data === 'cells') query.set('resolution', String(CELL_RESOLUTION));
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

/** The H3 resolution of the `cells` collection. */
export const CELL_RESOLUTION = 7;
/**
 * Side of the tiles (degrees) a bbox's cells are read in: a tile grown by CELL_MARGIN holds some 6,000
 * resolution-7 cells at most (at 32.5° N), within the Risk Index's cell budget (RISK_MAX_CELLS, 10,000).
 */
export const CELL_TILE_DEGREES = 1.5;
/** More than a resolution-7 cell's radius (about 1.2 km), in degrees at 45° N. */
const CELL_MARGIN = 0.05;

interface CellTile {
  /** The box whose cells the export lists. */
  query: Bbox;
  /** Whether a cell (by its center) is this tile's: each cell of the bbox is exactly one tile's. */
  owns: (lon: number, lat: number) => boolean;
}

const grow = ([w, s, e, n]: Bbox, by: number): Bbox => [w - by, s - by, e + by, n + by];
const clip = (a: Bbox, b: Bbox): Bbox => [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];
const meets = (a: Bbox, b: Bbox) => a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3];

/**
 * The tiles of a bbox's cells: the bbox (within the covered states' extent) cut into a grid of
 * CELL_TILE_DEGREES, only the tiles that meet a covered state. A cell belongs to the tile its center lies
 * in, the outer tiles reaching out without end (a cell of the bbox may have its center outside it); each
 * tile's query box is grown by more than a cell's radius (within the bbox), so that it holds every cell it
 * owns: a cell of the bbox meets its covered part within a cell's radius of its center, clamped into the bbox.
 */
export function cellTiles(bbox: Bbox): CellTile[] {
  const states = stateBoundaries().map((b) => grow(b.bbox, CELL_MARGIN));
  const extent = states.reduce((a, b) => [Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[2], b[2]), Math.max(a[3], b[3])]);
  const box = clip(bbox, extent);
  if (box[0] > box[2] || box[1] > box[3]) return [];
  const [nx, ny] = [Math.max(1, Math.ceil((box[2] - box[0]) / CELL_TILE_DEGREES)), Math.max(1, Math.ceil((box[3] - box[1]) / CELL_TILE_DEGREES))];
  if (nx * ny === 1) return [{ query: box, owns: () => true }];
  const [w, h] = [(box[2] - box[0]) / nx, (box[3] - box[1]) / ny];
  const tiles: CellTile[] = [];
  for (let j = 0; j < ny; j++) {
    for (let i = 0; i < nx; i++) {
      const tile: Bbox = [box[0] + i * w, box[1] + j * h, i === nx - 1 ? box[2] : box[0] + (i + 1) * w, j === ny - 1 ? box[3] : box[1] + (j + 1) * h];
      // Within the bbox: a cell the query gives overlaps the bbox's covered part, as the bbox's cells do.
      const query = clip(grow(tile, CELL_MARGIN), bbox);
      if (!states.some((s) => meets(s, query))) continue;
      tiles.push({
        query,
        owns: (lon, lat) => (i === 0 || lon >= tile[0]) && (i === nx - 1 || lon < tile[2]) && (j === 0 || lat >= tile[1]) && (j === ny - 1 || lat < tile[3]),
      });
    }
  }
  return tiles;
}

/** An items cursor of cells: the tile and the export's cursor within it. */
const encodeCellCursor = (tile: number, after: string | null) => encodeCursor([tile, after ?? '']);
const decodeCellCursor = (value: string | null) => {
  try {
    return decodeCursor(value, (k) => (k.length === 2 && Number.isInteger(k[0]) && (k[0] as number) >= 0 && typeof k[1] === 'string'
      ? { tile: k[0] as number, after: (k[1] as string) || null } : null), 'cursor');
  } catch (error) {
    if (error instanceof AppError) throw new OgcError(400, 'InvalidParameterValue', 'cursor is not one of this API\'s next links');
    throw error;
  }
};

/**
 * The cells of the bbox at resolution 7 behind the cursor, tile after tile (cellTiles): each export
 * request stays within the Risk Index's cell budget however large the bbox, and a QGIS layer of a whole
 * state pages through it (next links) instead of being refused. numberMatched only when one tile holds the bbox.
 */
async function readCells(app: FastifyInstance, q: ItemsQuery) {
  const tiles = cellTiles(q.bbox);
  const cursor = decodeCellCursor(q.after) ?? { tile: 0, after: null };
  const features: Feature[] = [];
  let { tile, after } = cursor;
  let matched: number | null = null;
  while (tile < tiles.length && features.length < q.limit) {
    const { query, owns } = tiles[tile];
    const page = await exportPage(app, q, bboxWkt(query), Math.min(RISK_EXPORT_PAGE.cells.max, q.limit - features.length), after);
    if (tiles.length === 1) {
      features.push(...page.features);
      matched = page.numberMatched;
    } else {
      features.push(...page.features.filter((f) => {
        const [lat, lon] = cellToLatLng(f.id);
        return owns(lon, lat);
      }));
    }
    after = page.after;
    if (!after) tile += 1;
  }
  if (tiles.length === 0) matched = 0;
  return { features, after: tile < tiles.length ? encodeCellCursor(tile, after) : null, matched };
}

/**
 * At most `limit` features behind `after` (an export cursor; for cells, readCells'). Crashes are kept when inside the bbox (the
 * export holds the crashes of the H3 cells that cover it) and within datetime; they come most recent
 * first, so paging stops once they are older than its start. `after` is null on the last page.
 */
export async function readItems(app: FastifyInstance, q: ItemsQuery) {
  if (q.data === 'cells') return readCells(app, q);
  const wkt = bboxWkt(q.bbox);
  const features: Feature[] = [];
  let after = q.after, scanned = 0;
  do {
    const page = await exportPage(app, q, wkt, Math.min(RISK_EXPORT_PAGE[q.data].max, q.limit - features.length), after);
    scanned += page.features.length;
    after = page.after;
    features.push(...page.features.filter((f) => inside(f, q.bbox) && (!q.datetime || within(localTime(f), q.datetime))));
    const last = page.features.at(-1);
    if (q.datetime?.start && last && localTime(last) < q.datetime.start) after = null;
  } while (after && features.length < q.limit && scanned < OGC_SCAN_ROWS);
  return { features, after, matched: null };
}
