import { bbox as turfBbox, booleanPointInPolygon } from '@turf/turf';
import type { Feature, MultiPolygon, Polygon, Position } from 'geojson';
import { tooComplex, type GeometryBudget } from './budget.ts';

/** Crash positions as one flat array: longitude, latitude, fatalities, for each crash. */
export type CrashPoints = Float64Array;
export const POINT_STRIDE = 3;

export interface InsideCount { crashes: number; fatalities: number }

interface Piece { rings: Position[][]; box: number[]; vertices: number }

const pieces = (areas: Feature<Polygon | MultiPolygon>[]): Piece[] => areas.flatMap((a) =>
  (a.geometry.type === 'Polygon' ? [a.geometry.coordinates] : a.geometry.coordinates).map((rings) => ({
    rings, box: turfBbox({ type: 'Polygon', coordinates: rings }), vertices: rings.reduce((n, r) => n + r.length, 0),
  })));

const inBox = (box: number[], x: number, y: number) => x >= box[0] && x <= box[2] && y >= box[1] && y <= box[3];

/**
 * The crashes of `points` inside the covered area (its pieces are disjoint, so each counts once),
 * and their fatalities. The work (per crash, the vertices of every piece whose bounding box holds it)
 * is counted first and refused over `budget.pointTests` (422 naming `pointTests`).
 */
export function countInside(areas: Feature<Polygon | MultiPolygon>[], points: CrashPoints, budget: GeometryBudget): InsideCount {
  const all = pieces(areas);
  const candidates: [number, Piece][] = [];
  let work = 0;
  for (let i = 0; i < points.length; i += POINT_STRIDE) {
    for (const piece of all) {
      if (!inBox(piece.box, points[i], points[i + 1])) continue;
      candidates.push([i, piece]);
      work += piece.vertices;
    }
  }
  if (work > budget.pointTests) throw tooComplex('pointTests', budget.pointTests, work);
  const counted = new Set<number>();
  let fatalities = 0;
  for (const [i, piece] of candidates) {
    if (counted.has(i) || !booleanPointInPolygon([points[i], points[i + 1]], { type: 'Polygon', coordinates: piece.rings })) continue;
    counted.add(i);
    fatalities += points[i + 2];
  }
  return { crashes: counted.size, fatalities };
}
