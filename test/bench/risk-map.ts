/**
 * `node test/bench/risk-map.ts [--runs=10]`
 *
 * The Risk Index map for a few areas (the Loop, Los Angeles County, the Los Angeles metro box): SVG
 * size and the median wall milliseconds of `renderMap` (figures read on the event loop, drawing in a
 * worker), and the same for the interactive map's GeoJSON layers. The first drawing in a fresh worker
 * (which loads the counties and places once per thread) is printed apart. Bounded: `runs` rounds.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { geojsonToWKT } from '@terraformer/wkt';
import type { Geometry } from 'geojson';
import { feature } from 'topojson-client';
import type { GeometryCollection, Topology } from 'topojson-specification';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { renderMap } from '../../subgraphs/risk/map/map.ts';
import { resolveArea } from '../../subgraphs/risk/services/area.ts';
import { testDatabase } from '../support/database.ts';
import { flag, percentile } from './args.ts';
import { box, buildRiskStack } from './risk-stack.ts';

const RUNS = Math.round(flag('runs', 10, 100));
const topology = createRequire(import.meta.url)('us-atlas/counties-10m.json') as Topology<{ counties: GeometryCollection }>;
const laCounty = topology.objects.counties.geometries.find((g) => g.id === '06037')!;
const AREAS = [
  { name: 'Chicago Loop (radius 0.02)', geometry: 'POINT(-87.6298 41.8781)', radius: 0.02 },
  { name: 'Los Angeles County', geometry: geojsonToWKT((feature(topology, laCounty) as { geometry: Geometry }).geometry), radius: null },
  { name: 'Los Angeles metro box', geometry: box(-118.95, 33.7, -117.65, 34.82), radius: null },
];

const dataDir = await mkdtemp(join(os.tmpdir(), 'risk-map-'));
const database = await testDatabase();
const { stack, riskEm } = await buildRiskStack(dataDir, database.env);
await riskDataLoaded(riskEm);
const rows: Record<string, Record<string, string | number>> = {};
try {
  for (const format of ['svg', 'geojson'] as const) {
    for (const area of AREAS) {
      const times: number[] = [];
      let bytes = 0;
      for (let run = 0; run <= RUNS; run++) {
        const q = await resolveArea(riskEm.fork(), area.geometry, area.radius);
        const t = performance.now();
        const text = await renderMap(q, format);
        times.push(performance.now() - t);
        bytes = Buffer.byteLength(text);
      }
      const [first, ...rest] = times;
      rows[`${area.name} · ${format}`] = { bytes, 'first ms': Math.round(first), 'median ms': Math.round(percentile(rest.sort((a, b) => a - b), 50)) };
    }
  }
} finally {
  await stack.close();
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
}
console.log(`Risk Index map: size and time (${RUNS} runs after the first, ${database.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`);
console.table(rows);
console.log(`Load average: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs`);
