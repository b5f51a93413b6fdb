import { createRequire } from 'node:module';
import { booleanPointInPolygon, buffer, difference, featureCollection, polygon, simplify, truncate, union } from '@turf/turf';
import type { Feature, FeatureCollection, MultiPolygon, Polygon } from 'geojson';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';

const require = createRequire(import.meta.url);

type Area = Feature<Polygon | MultiPolygon>;

/** FIPS codes of the states whose outlines bound the covered ones. */
const FIPS = { AZ: 4, CA: 6, IL: 17, IN: 18, MI: 26, NV: 32, OR: 41, WI: 55 } as const;

/** California's seaward boundary: three nautical miles (Submerged Lands Act, 43 U.S.C. 1301(b), 1312). */
export const CALIFORNIA_SEAWARD_KM = 5.556;
/** Douglas-Peucker tolerance of the seaward edge, degrees (~0.1-0.2 km). */
const SEAWARD_SIMPLIFY_DEGREES = 0.002;
/** California/Oregon line: 42°N, continued west into the Pacific. */
const CA_OR_LATITUDE = 42;
/**
 * California/Mexico line: the land boundary's straight line from the Colorado River to the Pacific
 * (Treaty of Guadalupe Hidalgo, 1848), continued due west from the shore as an approximation of the
 * 1978 maritime boundary, which runs a little south of west.
 */
const CA_MEXICO_LINE: [number, number][] = [[-114.719, 32.7185], [-117.124, 32.5343]];
/** Illinois/Wisconsin line: 42°30'N, east to the middle of Lake Michigan (Illinois enabling act, 1818, 3 Stat. 428). */
const IL_WI_LATITUDE = 42.5;
/** Indiana's northern line: ten miles north of the southern extreme of Lake Michigan, 41°45'37"N (Indiana enabling act, 1816, 3 Stat. 289). */
const IN_NORTH_LATITUDE = 41.7603;
/** Illinois/Indiana line: the meridian 87°31'30"W, north from the Wabash to Indiana's northern line (same act). */
const IL_IN_LONGITUDE = -87.525;

/** The shipped 1:10,000,000 Census outlines (us-atlas states-10m), clipped at the shoreline. */
export function stateOutlines(): Map<number, Area> {
  const topology = require('us-atlas/states-10m.json') as Topology<{ states: GeometryCollection }>;
  const states = feature(topology, topology.objects.states) as unknown as { features: Area[] };
  return new Map(states.features.map((s) => [Number(s.id), s]));
}

/** The longitude midway across the widest stretch of water along a parallel, between `west` and `east`. */
export function lakeMiddle(latitude: number, west: number, east: number, land: Area[]): number {
  const STEP = 0.0005;
  let best = { from: 0, to: 0 };
  let from: number | null = null;
  for (let lon = west; lon <= east + STEP / 2; lon += STEP) {
    const wet = lon <= east && !land.some((s) => booleanPointInPolygon([lon, latitude], s));
    if (wet && from === null) from = lon;
    if (!wet && from !== null) {
      if (lon - from > best.to - best.from) best = { from, to: lon };
      from = null;
    }
  }
  return (best.from + best.to) / 2;
}

const area = (geometry: Area | null, what: string): Area => {
  if (!geometry) throw new Error(`${what} is empty`);
  return geometry;
};

/** California: its outline buffered 3 nm, less Oregon, Nevada, Arizona and what lies beyond the 42°N and Mexican lines. */
function california(states: Map<number, Area>): Area {
  const outline = states.get(FIPS.CA)!;
  // Simplified (by well under the outline's own error): a state-wide query's WKT stays within a URL.
  const buffered = simplify(area(buffer(outline, CALIFORNIA_SEAWARD_KM, { units: 'kilometers' }) as Area, 'the buffer'), { tolerance: SEAWARD_SIMPLIFY_DEGREES });
  const [[eastLon, eastLat], [coastLon, coastLat]] = CA_MEXICO_LINE;
  const north = polygon([[[-127, CA_OR_LATITUDE], [-113, CA_OR_LATITUDE], [-113, 44], [-127, 44], [-127, CA_OR_LATITUDE]]]);
  const mexico = polygon([[[-127, 30], [-113, 30], [-113, eastLat], [eastLon, eastLat], [coastLon, coastLat], [-127, coastLat], [-127, 30]]]);
  const neighbours = [FIPS.OR, FIPS.NV, FIPS.AZ].map((fips) => states.get(fips)!);
  // The buffer holds the whole outline: taking the rest away leaves the state and its waters, with no seam along the shore.
  return area(difference(featureCollection([buffered, ...neighbours, north, mexico])), 'California');
}

/**
 * Illinois: its outline and its part of Lake Michigan, bounded by the Indiana meridian and
 * Indiana's northern line, the middle of the lake (straight between its middles along those two
 * parallels) and 42°30'N.
 */
function illinois(states: Map<number, Area>): Area {
  const land = [FIPS.IL, FIPS.IN, FIPS.MI, FIPS.WI].map((fips) => states.get(fips)!);
  const southMiddle = lakeMiddle(IN_NORTH_LATITUDE, -87.6, -86.5, land);
  const northMiddle = lakeMiddle(IL_WI_LATITUDE, -87.9, -86.1, land);
  const lake = polygon([[
    [-88, 41.6], [IL_IN_LONGITUDE, 41.6], [IL_IN_LONGITUDE, IN_NORTH_LATITUDE], [southMiddle, IN_NORTH_LATITUDE],
    [northMiddle, IL_WI_LATITUDE], [-88, IL_WI_LATITUDE], [-88, 41.6],
  ]]);
  // The box reaches west over Illinois' own land only; Indiana and Wisconsin are taken out all the same.
  const water = area(difference(featureCollection([lake, states.get(FIPS.IN)!, states.get(FIPS.WI)!])), 'the lake');
  return area(union(featureCollection([states.get(FIPS.IL)!, water])), 'Illinois');
}

/** The covered states' legal boundaries as GeoJSON (properties.fips), coordinates to 6 decimals (0.1 m). */
export function buildCoverageBoundaries(): FeatureCollection<Polygon | MultiPolygon, { fips: number }> {
  const states = stateOutlines();
  const features = [[FIPS.CA, california(states)], [FIPS.IL, illinois(states)]] as const;
  return featureCollection(features.map(([fips, f]) => ({
    type: 'Feature' as const, properties: { fips }, geometry: truncate(f, { precision: 6, mutate: true }).geometry,
  })));
}
