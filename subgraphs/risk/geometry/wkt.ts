import { wktToGeoJSON } from '@terraformer/wkt';
import { buffer, kinks, polygon as turfPolygon } from '@turf/turf';
import type { Feature, Geometry, MultiPolygon, Polygon, Position } from 'geojson';
import { badInput } from '../../platform/errors.ts';
import { wktSyntaxProblem } from './wkt-syntax.ts';
import { BUFFER_STEPS, checkBudget, DEFAULT_BUDGET, tooComplex, vertexCount, type GeometryBudget } from './budget.ts';

/** Largest accepted buffer radius, in degrees (about 550 km of latitude). */
export const MAX_RADIUS_DEGREES = 5;
/**
 * Points and lines sent without a radius are buffered by this many degrees (about 50 m): the road
 * itself. A polygon without a radius is used as it is.
 */
export const DEFAULT_LINEAR_RADIUS = 0.0005;

const SUPPORTED = ['Point', 'LineString', 'Polygon', 'MultiPoint', 'MultiLineString', 'MultiPolygon'];

export interface SearchArea {
  /** The input geometry as parsed (GeoJSON, longitude first). */
  geometry: Geometry;
  /** The area searched: the geometry buffered by the radius (points and lines always are). */
  area: Feature<Polygon | MultiPolygon>;
  /** The radius applied, in degrees; null when a polygon was used as given. */
  radius: number | null;
}

const quote = (found: string) => (found === 'end of input' ? found : `'${found}'`);

function checkPosition(pos: Position, field: string) {
  if (pos.length < 2 || pos.some((v) => typeof v !== 'number' || !Number.isFinite(v))) {
    throw badInput('every coordinate needs a longitude and a latitude', field);
  }
  const [lon, lat] = pos;
  if (lon < -180 || lon > 180) throw badInput(`longitude ${lon} is out of range [-180, 180] (WKT is longitude first)`, field);
  if (lat < -90 || lat > 90) throw badInput(`latitude ${lat} is out of range [-90, 90] (WKT is longitude first)`, field);
}

function checkRing(ring: Position[], field: string) {
  if (ring.length < 4) throw badInput('a polygon ring needs at least 4 positions (the first repeated last)', field);
  const [a, b] = [ring[0], ring[ring.length - 1]];
  if (a[0] !== b[0] || a[1] !== b[1]) throw badInput('a polygon ring must be closed (its last position equal to its first)', field);
}

function checkPolygon(rings: Position[][], field: string) {
  if (rings.length === 0) throw badInput('the geometry is empty', field);
  for (const ring of rings) checkRing(ring, field);
  if (kinks(turfPolygon(rings)).features.length > 0) throw badInput('the polygon intersects itself', field);
}

/**
 * Parses WKT (keywords in any case) into GeoJSON, or a 400 saying what is wrong. More than
 * `maxVertices` positions is a 422 before any validation (the self-intersection check grows with their square).
 */
export function parseWkt(wkt: string, field = 'geometry', maxVertices = DEFAULT_BUDGET.vertices): Geometry {
  const text = wkt.trim();
  if (!text) throw badInput('the WKT geometry is empty', field);
  let geometry: Geometry;
  try {
    // Keywords are case-insensitive in WKT; the parser wants them upper case (numbers are unaffected).
    geometry = wktToGeoJSON(text.toUpperCase()) as Geometry;
  } catch (error) {
    const problem = wktSyntaxProblem(wkt);
    if (problem) {
      throw badInput(`invalid WKT at offset ${problem.offset}: expected ${problem.expected}, found ${quote(problem.found)} (near ${JSON.stringify(problem.near)})`,
        field, { ...problem });
    }
    // The parser refused what the grammar walk takes: its own words, without a position.
    throw badInput(`invalid WKT: ${(error as Error).message.split('\n').slice(0, 1).join(' ').slice(0, 200)}`, field);
  }
  if (!geometry || !SUPPORTED.includes(geometry.type)) {
    throw badInput(`unsupported geometry type ${geometry?.type ?? 'unknown'}: use POINT, LINESTRING, POLYGON or their MULTI forms`, field);
  }
  const coords = (geometry as { coordinates: unknown[] }).coordinates;
  if (!Array.isArray(coords) || coords.length === 0) throw badInput('the geometry is empty', field);
  const positions = vertexCount(geometry);
  if (positions > maxVertices) throw tooComplex('vertices', maxVertices, positions);
  switch (geometry.type) {
    case 'Point': checkPosition(geometry.coordinates, field); break;
    case 'MultiPoint': geometry.coordinates.forEach((p) => checkPosition(p, field)); break;
    case 'LineString':
      if (geometry.coordinates.length < 2) throw badInput('a linestring needs at least 2 positions', field);
      geometry.coordinates.forEach((p) => checkPosition(p, field)); break;
    case 'MultiLineString':
      for (const line of geometry.coordinates) {
        if (line.length < 2) throw badInput('a linestring needs at least 2 positions', field);
        line.forEach((p) => checkPosition(p, field));
      }
      break;
    case 'Polygon':
      geometry.coordinates.flat().forEach((p) => checkPosition(p, field));
      checkPolygon(geometry.coordinates, field); break;
    case 'MultiPolygon':
      geometry.coordinates.flat(2).forEach((p) => checkPosition(p, field));
      for (const poly of geometry.coordinates) checkPolygon(poly, field);
      break;
  }
  return geometry;
}

/** Checks the optional radius (degrees): a finite number in (0, MAX_RADIUS_DEGREES]. */
export function checkRadius(radius: number | null | undefined): number | null {
  if (radius === null || radius === undefined) return null;
  if (typeof radius !== 'number' || !Number.isFinite(radius)) throw badInput('radius must be a number of degrees', 'radius');
  if (radius < 0) throw badInput('radius must not be negative', 'radius');
  if (radius > MAX_RADIUS_DEGREES) throw badInput(`radius must be at most ${MAX_RADIUS_DEGREES} degrees`, 'radius');
  return radius === 0 ? null : radius;
}

/**
 * The search area: WKT parsed and validated, checked against the budget, then buffered by the
 * radius (points and lines always are).
 */
export function searchArea(wkt: string, radius?: number | null, budget: GeometryBudget = DEFAULT_BUDGET): SearchArea {
  const geometry = parseWkt(wkt, 'geometry', budget.vertices);
  const r = checkRadius(radius);
  const areal = geometry.type === 'Polygon' || geometry.type === 'MultiPolygon';
  if (areal && r === null) {
    checkBudget(geometry, null, budget);
    return { geometry, area: { type: 'Feature', properties: {}, geometry: geometry as Polygon | MultiPolygon }, radius: null };
  }
  const applied = r ?? DEFAULT_LINEAR_RADIUS;
  checkBudget(geometry, applied, budget);
  const buffered = buffer(geometry, applied, { units: 'degrees', steps: BUFFER_STEPS });
  if (!buffered || buffered.type !== 'Feature' || !buffered.geometry) throw badInput('the geometry could not be buffered', 'radius');
  return { geometry, area: buffered as Feature<Polygon | MultiPolygon>, radius: applied };
}
