import { simplify } from '@turf/turf';
import type { Geometry, Position } from 'geojson';
import { getHexagonAreaAvg } from 'h3-js';
import { AppError } from '../../platform/errors.ts';
import { RESOLUTIONS } from '../entities.ts';
import { stateBoundaries } from './coverage.ts';

/** What one search area may cost; checked before the buffer is computed. */
export interface GeometryBudget {
  /** Positions of the geometry as sent (validation grows with their square). */
  vertices: number;
  /** The geometry's bounding box grown by the radius, km². */
  areaKm2: number;
  /** H3 cells of the coarsest resolution the covered part of that box needs at least. */
  cells: number;
  /** Vertices the buffer works through: the buffered outline times how often its pieces overlap. */
  bufferedVertices: number;
  /** Point-in-polygon edge tests of the area's crashes: per crash, the vertices of the polygons whose box holds it. */
  pointTests: number;
}
export type BudgetLimit = keyof GeometryBudget;

export const DEFAULT_BUDGET: GeometryBudget = { vertices: 5000, areaKm2: 5_000_000, cells: 10_000, bufferedVertices: 200_000, pointTests: 50_000_000 };

/** The arc steps per quarter circle the buffer uses, and the vertices one buffered segment gets. */
export const BUFFER_STEPS = 8;
const VERTICES_PER_SEGMENT = 2 * BUFFER_STEPS + 2;
const EARTH_RADIUS_KM = 6371.0088;
const COARSEST = Math.min(...RESOLUTIONS);
const rad = (deg: number) => (deg * Math.PI) / 180;

/** 422 naming the limit passed: one of the budget's, the worker's time (timeMs) or memory (heapMb), or a filter's crash rows (crashes). */
export function tooComplex(limit: BudgetLimit | 'timeMs' | 'heapMb' | 'crashes', max: number, got?: number): AppError {
  return new AppError('GEOMETRY_TOO_COMPLEX',
    `the search area is too complex to compute (limit: ${limit}, max ${max}${got === undefined ? '' : `, got ${got}`}); `
      + 'send fewer positions, a smaller radius or a smaller area',
    { limit, max, ...(got === undefined ? {} : { got }) });
}

/** The lines whose segments are buffered: points are zero-length lines, polygon rings are closed lines. */
function paths(geometry: Geometry): Position[][] {
  switch (geometry.type) {
    case 'Point': return [[geometry.coordinates]];
    case 'MultiPoint': return geometry.coordinates.map((p) => [p]);
    case 'LineString': return [geometry.coordinates];
    case 'MultiLineString': return geometry.coordinates;
    case 'Polygon': return geometry.coordinates;
    case 'MultiPolygon': return geometry.coordinates.flat();
    default: return [];
  }
}

export const vertexCount = (geometry: Geometry) => paths(geometry).reduce((n, p) => n + p.length, 0);

type Box = [number, number, number, number];

function envelope(geometry: Geometry, grow: number): Box {
  const box: Box = [Infinity, Infinity, -Infinity, -Infinity];
  for (const path of paths(geometry)) {
    for (const [x, y] of path) {
      box[0] = Math.min(box[0], x); box[1] = Math.min(box[1], y); box[2] = Math.max(box[2], x); box[3] = Math.max(box[3], y);
    }
  }
  return [Math.max(-180, box[0] - grow), Math.max(-90, box[1] - grow), Math.min(180, box[2] + grow), Math.min(90, box[3] + grow)];
}

/** Area of a longitude/latitude box on the sphere, km². */
const boxKm2 = ([w, s, e, n]: Box) => (e <= w || n <= s ? 0 : EARTH_RADIUS_KM ** 2 * rad(e - w) * (Math.sin(rad(n)) - Math.sin(rad(s))));

const intersection = (a: Box, b: Box): Box => [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];

/**
 * Vertices the buffer works through: every segment's buffered outline, times the overlap depth
 * (the summed areas of the buffered segments over the area of the box they lie in). The buffer
 * nodes every outline against each one it overlaps, so a line that doubles back on itself within
 * the radius (the zig-zag of a few hundred positions) costs far more than a long route.
 */
function outlineWork(geometry: Geometry, radius: number): number {
  let segments = 0;
  let capsules = 0;
  for (const path of paths(geometry)) {
    const count = Math.max(1, path.length - 1);
    segments += count;
    for (let i = 0; i < count; i++) {
      const [a, b] = [path[i], path[Math.min(i + 1, path.length - 1)]];
      capsules += 2 * radius * Math.hypot(b[0] - a[0], b[1] - a[1]) + Math.PI * radius ** 2;
    }
  }
  const [w, s, e, n] = envelope(geometry, radius);
  const depth = Math.max(1, capsules / Math.max((e - w) * (n - s), Number.EPSILON));
  return Math.ceil(segments * VERTICES_PER_SEGMENT * depth);
}

/** Distance of `b` from the line through `a` and `c`, degrees. */
function offLine(a: Position, b: Position, c: Position): number {
  const [dx, dy] = [c[0] - a[0], c[1] - a[1]];
  const chord = Math.hypot(dx, dy);
  return chord === 0 ? Math.hypot(b[0] - a[0], b[1] - a[1]) : Math.abs(dx * (b[1] - a[1]) - dy * (b[0] - a[0])) / chord;
}

/**
 * The outline work of the geometry as the buffer sees it: simplified first at the tolerance the
 * buffer itself simplifies with (a hundredth of the radius), so a dense ring is not over-counted.
 * Simplifying costs more than counting, so it is skipped when the plain count is `enough`.
 */
function bufferedVertices(geometry: Geometry, radius: number, enough: number): number {
  const plain = outlineWork(geometry, radius);
  if (plain <= enough) return plain;
  // Simplifying only helps where vertices barely leave the line through their neighbours (a dense
  // ring, a GPS trace); a zig-zag keeps every vertex, and would only cost the time (and stack) to find it out.
  const tolerance = radius / 100;
  let flat = 0;
  let inner = 0;
  for (const p of paths(geometry)) {
    for (let i = 1; i + 1 < p.length; i++, inner++) if (offLine(p[i - 1], p[i], p[i + 1]) < tolerance) flat += 1;
  }
  if (flat < inner / 10) return plain;
  let simplified: Geometry;
  try {
    simplified = simplify(geometry, { tolerance, highQuality: false, mutate: false }) as Geometry;
  } catch (error) {
    // turf's Douglas-Peucker recurses once per kept vertex: a zig-zag of thousands overflows the stack. Nothing simplifies there.
    if (error instanceof RangeError) return plain;
    throw error;
  }
  return Math.min(plain, outlineWork(simplified, radius));
}

export interface CostEstimate { vertices: number; areaKm2: number; cells: number; bufferedVertices: number }

/** Cheap estimates of what the search area will cost, from its positions alone (exact enough to decide `budget`). */
export function estimateCost(geometry: Geometry, radius: number | null, budget?: GeometryBudget): CostEstimate {
  const box = envelope(geometry, radius ?? 0);
  const coveredKm2 = stateBoundaries().reduce((sum, b) => sum + boxKm2(intersection(box, b.bbox)), 0);
  return {
    vertices: vertexCount(geometry),
    areaKm2: Math.round(boxKm2(box)),
    cells: Math.ceil(coveredKm2 / getHexagonAreaAvg(COARSEST, 'km2')),
    bufferedVertices: radius === null ? 0 : bufferedVertices(geometry, radius, budget?.bufferedVertices ?? 0),
  };
}

/** Refuses (422 GEOMETRY_TOO_COMPLEX, naming the limit) a search area over budget; `radius` null = not buffered. */
export function checkBudget(geometry: Geometry, radius: number | null, budget: GeometryBudget = DEFAULT_BUDGET): CostEstimate {
  const cost = estimateCost(geometry, radius, budget);
  for (const limit of ['vertices', 'areaKm2', 'cells', 'bufferedVertices'] as const) {
    if (cost[limit] > budget[limit]) throw tooComplex(limit, budget[limit], cost[limit]);
  }
  return cost;
}
