import { readFileSync } from 'node:fs';
import { area as turfArea, bbox as turfBbox, bboxClip, booleanPointInPolygon, featureCollection, intersect } from '@turf/turf';
import type { Feature, FeatureCollection, MultiPolygon, Polygon } from 'geojson';

/** The two covered states: FIPS code, postal code, IANA time zone. */
export const COVERED_STATES = [
  { fips: 6, code: 'CA', name: 'California', timeZone: 'America/Los_Angeles' },
  { fips: 17, code: 'IL', name: 'Illinois', timeZone: 'America/Chicago' },
] as const;
export type CoveredState = (typeof COVERED_STATES)[number];

export interface StateBoundary {
  state: CoveredState;
  feature: Feature<Polygon | MultiPolygon>;
  bbox: [number, number, number, number];
  km2: number;
}

let boundaries: StateBoundary[] | null = null;

/**
 * The legal boundaries of California and Illinois, waters included (coverage-boundaries.json, made
 * from the Census 1:10,000,000 outlines by legal-boundaries.ts), loaded once.
 */
export function stateBoundaries(): StateBoundary[] {
  if (boundaries) return boundaries;
  const file = new URL('./coverage-boundaries.json', import.meta.url);
  const { features } = JSON.parse(readFileSync(file, 'utf8')) as FeatureCollection<Polygon | MultiPolygon, { fips: number }>;
  boundaries = COVERED_STATES.map((state) => {
    const f = features.find((s) => s.properties.fips === state.fips);
    if (!f) throw new Error(`coverage-boundaries.json has no boundary for ${state.name}`);
    return { state, feature: f, bbox: turfBbox(f) as [number, number, number, number], km2: turfArea(f) / 1e6 };
  });
  return boundaries;
}

/** The covered state a point lies in, or null. */
export function stateAt(lon: number, lat: number): CoveredState | null {
  for (const b of stateBoundaries()) {
    const [w, s, e, n] = b.bbox;
    if (lon < w || lon > e || lat < s || lat > n) continue;
    if (booleanPointInPolygon([lon, lat], b.feature)) return b.state;
  }
  return null;
}

export interface CoveredPart {
  state: CoveredState;
  area: Feature<Polygon | MultiPolygon>;
  areaKm2: number;
}

export interface Coverage {
  /** Area of the search area, km². */
  requestedKm2: number;
  /** The search area clipped to each covered state it touches. */
  parts: CoveredPart[];
  coveredKm2: number;
  /** 0..1: share of the search area inside coverage. */
  coveredFraction: number;
  status: 'COVERED' | 'PARTIAL' | 'OUTSIDE';
  message: string;
}

/** Relative difference of areas under which a clipped state is the whole state (floating error is ~1e-15). */
const WHOLE_STATE_TOLERANCE = 1e-9;

const overlaps = (a: number[], b: number[]) => a[0] <= b[2] && a[2] >= b[0] && a[1] <= b[3] && a[3] >= b[1];

/** A state cut to a bounding box, without the degenerate rings bboxClip leaves; null when nothing is left. */
function clipToBox(state: Feature<Polygon | MultiPolygon>, box: number[]): Feature<MultiPolygon> | null {
  const clipped = bboxClip(state, box as [number, number, number, number]).geometry as Polygon | MultiPolygon;
  const polygons = clipped.type === 'Polygon' ? [clipped.coordinates] : clipped.coordinates;
  const kept = polygons
    .map((rings) => rings.filter((ring) => ring.length >= 4))
    .filter((rings, i) => rings.length > 0 && polygons[i][0].length >= 4);
  return kept.length ? { type: 'Feature', properties: {}, geometry: { type: 'MultiPolygon', coordinates: kept } } : null;
}

/** Clips a search area to California and Illinois. */
export function clipToCoverage(area: Feature<Polygon | MultiPolygon>): Coverage {
  const requestedKm2 = turfArea(area) / 1e6;
  const box = turfBbox(area);
  const parts: CoveredPart[] = [];
  for (const b of stateBoundaries()) {
    if (!overlaps(box, b.bbox)) continue;
    // Cut the state down to the area's bounding box first (linear time), so the exact
    // intersection only works on the stretch of border near the area.
    const local = clipToBox(b.feature, box);
    if (!local) continue;
    const clipped = intersect(featureCollection([area, local]));
    if (!clipped) continue;
    const km2 = turfArea(clipped) / 1e6;
    // An area holding the whole state (a state-wide query) is the state's own outline: the same
    // object every time, so its cells are computed once per thread (cellsOverlapping).
    const whole = Math.abs(km2 - b.km2) <= b.km2 * WHOLE_STATE_TOLERANCE;
    if (km2 > 0) parts.push({ state: b.state, area: whole ? b.feature : clipped as Feature<Polygon | MultiPolygon>, areaKm2: km2 });
  }
  const coveredKm2 = parts.reduce((s, p) => s + p.areaKm2, 0);
  const coveredFraction = requestedKm2 > 0 ? Math.min(1, coveredKm2 / requestedKm2) : 0;
  const names = parts.map((p) => p.state.name).join(' and ');
  if (parts.length === 0) {
    return { requestedKm2, parts, coveredKm2: 0, coveredFraction: 0, status: 'OUTSIDE',
      message: 'The search area is outside coverage (California and Illinois): no data.' };
  }
  if (coveredFraction < 0.999) {
    return { requestedKm2, parts, coveredKm2, coveredFraction, status: 'PARTIAL',
      message: `The search area is partly outside coverage: the data cover the ${Math.round(coveredFraction * 100)}% of it in ${names}.` };
  }
  return { requestedKm2, parts, coveredKm2, coveredFraction: 1, status: 'COVERED', message: `The search area is inside ${names}.` };
}
