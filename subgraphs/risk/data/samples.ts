import { booleanPointInPolygon } from '@turf/turf';
import { COVERED_STATES } from '../geometry/coverage.ts';
import { stateOutlines } from '../geometry/legal-boundaries.ts';
import { cellsOf } from '../geometry/cells.ts';
import type { TrafficSensor } from '../entities.ts';
import { gaussian, seededRandom, weighted } from '../../platform/random.ts';

/**
 * The project's generated sample (NOT real data): traffic counting stations clustered around the
 * large cities of California and Illinois and along their main interstates. The same seed gives the
 * same rows on every machine. Every answer derived from them says `sample: true`.
 */
export const SAMPLE_SEED = 20240611;

const CA = COVERED_STATES[0].fips;
const IL = COVERED_STATES[1].fips;

/** [name, state FIPS, lat, lon, spread in degrees, weight]. */
const CITIES: [string, number, number, number, number, number][] = [
  ['Los Angeles', CA, 34.05, -118.25, 0.18, 30], ['San Diego', CA, 32.75, -117.12, 0.1, 9], ['San Jose', CA, 37.33, -121.89, 0.08, 6],
  ['San Francisco', CA, 37.76, -122.43, 0.03, 6], ['Oakland', CA, 37.8, -122.25, 0.05, 4], ['Sacramento', CA, 38.57, -121.47, 0.08, 5],
  ['Fresno', CA, 36.75, -119.78, 0.06, 4], ['Bakersfield', CA, 35.37, -119.02, 0.06, 3], ['Riverside', CA, 33.95, -117.4, 0.1, 5],
  ['Redding', CA, 40.59, -122.39, 0.04, 1], ['Santa Barbara', CA, 34.42, -119.7, 0.03, 1],
  ['Chicago', IL, 41.85, -87.7, 0.1, 22], ['Aurora', IL, 41.76, -88.3, 0.04, 2], ['Rockford', IL, 42.27, -89.09, 0.04, 2],
  ['Peoria', IL, 40.69, -89.59, 0.04, 1.5], ['Springfield', IL, 39.78, -89.65, 0.04, 1.5], ['Champaign', IL, 40.11, -88.24, 0.03, 1],
];

/** Interstate corridors as [state, weight, [lon, lat] vertices]. */
const CORRIDORS: [number, number, [number, number][]][] = [
  [CA, 6, [[-118.25, 34.05], [-118.6, 34.9], [-119.0, 35.4], [-119.8, 36.7], [-121.0, 37.6], [-121.47, 38.57], [-122.39, 40.59]]], // I-5
  [CA, 3, [[-122.4, 37.77], [-121.9, 38.1], [-121.47, 38.57], [-120.2, 39.3]]], // I-80
  [CA, 3, [[-118.25, 34.05], [-117.4, 34.1], [-116.5, 34.5], [-115.1, 34.85]]], // I-10 / I-15 east
  [CA, 2, [[-117.16, 32.72], [-117.3, 33.2], [-117.7, 33.6], [-118.25, 34.05]]], // I-5 south
  [IL, 4, [[-87.63, 41.88], [-88.2, 41.5], [-88.9, 40.8], [-89.65, 39.8], [-90.1, 38.7]]], // I-55
  [IL, 2, [[-87.63, 41.88], [-88.3, 41.9], [-89.09, 42.27]]], // I-90
  [IL, 2, [[-87.6, 41.5], [-88.24, 40.11], [-88.6, 39.1]]], // I-57
];

type Place = { state: number; lat: number; lon: number; corridor: boolean };

function placeGenerator(random: () => number) {
  const land = stateOutlines();
  type Choice = { kind: 'city'; city: (typeof CITIES)[number] } | { kind: 'corridor'; corridor: (typeof CORRIDORS)[number] };
  const choices: (readonly [Choice, number])[] = [
    ...CITIES.map((c) => [{ kind: 'city' as const, city: c }, c[5]] as const),
    ...CORRIDORS.map((c) => [{ kind: 'corridor' as const, corridor: c }, c[1] * 1.6] as const),
  ];
  return (): Place => {
    for (;;) {
      const pick = weighted(random, choices);
      let state: number, lat: number, lon: number;
      if (pick.kind === 'city') {
        const [, st, clat, clon, spread] = pick.city;
        state = st; lat = clat + gaussian(random) * spread; lon = clon + gaussian(random) * spread * 1.2;
      } else {
        const [st, , line] = pick.corridor;
        const i = Math.floor(random() * (line.length - 1));
        const t = random();
        state = st;
        lon = line[i][0] + (line[i + 1][0] - line[i][0]) * t + gaussian(random) * 0.004;
        lat = line[i][1] + (line[i + 1][1] - line[i][1]) * t + gaussian(random) * 0.004;
      }
      lat = Math.round(lat * 1e6) / 1e6; lon = Math.round(lon * 1e6) / 1e6;
      // On land: coverage reaches into the sea and Lake Michigan, counting stations do not.
      if (booleanPointInPolygon([lon, lat], land.get(state)!)) return { state, lat, lon, corridor: pick.kind === 'corridor' };
    }
  };
}

const PEAK_VOLUME: Record<number, number> = { 1: 4200, 2: 2800, 3: 1300, 4: 800, 5: 350, 7: 120 };
const FREE_FLOW: Record<number, number> = { 1: 108, 2: 96, 3: 64, 4: 56, 5: 48, 7: 40 };

/** Relative demand (0..1) by hour of week: weekday peaks at 08:00 and 17:00, a flatter weekend. */
export function demandShape(how: number): number {
  const day = Math.floor(how / 24);
  const hour = how % 24;
  const bump = (h: number, at: number, width: number) => Math.exp(-((h - at) ** 2) / (2 * width ** 2));
  if (day >= 5) return 0.12 + 0.6 * bump(hour, 13.5, 3.5);
  return 0.1 + 0.85 * bump(hour, 8, 1.4) + 0.95 * bump(hour, 17, 1.8) + 0.45 * bump(hour, 12.5, 2.5);
}

/** The sample traffic counting stations with their hour-of-week volume and speed profiles. */
export function sampleSensors(count = 320, seed = SAMPLE_SEED + 1): TrafficSensor[] {
  const random = seededRandom(seed);
  const place = placeGenerator(random);
  const rows: TrafficSensor[] = [];
  for (let n = 0; n < count; n++) {
    const where = place();
    const funcSys = where.corridor ? 1 : weighted(random, [[2, 20], [3, 30], [4, 25], [5, 15], [7, 10]] as const);
    const scale = 0.6 + random() * 0.8;
    const volume: number[] = [];
    const speed: number[] = [];
    for (let h = 0; h < 168; h++) {
      const d = Math.min(1, demandShape(h));
      volume.push(Math.round(PEAK_VOLUME[funcSys] * scale * d));
      speed.push(Math.round(FREE_FLOW[funcSys] * (1 - 0.45 * d * d) * 10) / 10);
    }
    rows.push({
      sensorId: `sample-${where.state === CA ? 'ca' : 'il'}-${String(n + 1).padStart(4, '0')}`, source: 'sample', state: where.state,
      latitude: where.lat, longitude: where.lon, functionalSystem: funcSys, volume, speed, ...cellsOf(where.lat, where.lon),
    } as TrafficSensor);
  }
  return rows;
}
