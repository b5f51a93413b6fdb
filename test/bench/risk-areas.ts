/**
 * `node test/bench/risk-areas.ts [--runs=15] [--budget=150]`
 *
 * Risk Index latency by area size: starts its own stack (gateway/stack.ts, the risk subgraph only, on
 * loopback, against a fresh database: PGlite in memory, or a fresh database on DATABASE_URL's server),
 * then queries GET /riskIndex/v1/all for areas from one city block to the whole of California.
 * Prints latency (median, p95) per area with the H3 resolution and cells touched, the ratio of the
 * largest area's median latency to a city's, and writes JSON to test/bench/results/. Each round asks
 * every area twice: cold (the cache of resolved areas emptied first: the figure comparable with the
 * releases before that cache) and warm (the same area again, as an analyst's next call for it).
 * Bounded: at most `runs` rounds and `budget` seconds in all (measurement stops early when it runs out).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { areaPoolFor } from '../../subgraphs/risk/geometry/pool.ts';
import { testDatabase } from '../support/database.ts';
import { flag, percentile } from './args.ts';
import { box, buildRiskStack, CALIFORNIA, ILLINOIS } from './risk-stack.ts';

const RUNS = Math.round(flag('runs', 15, 100));
const BUDGET_MS = flag('budget', 150, 600) * 1000;


const AREAS: { name: string; geometry: string; radius?: number }[] = [
  { name: 'city block (Chicago Loop)', geometry: box(-87.6305, 41.8775, -87.6290, 41.8785) },
  { name: 'route corridor 1.2 km, radius 0.002', geometry: 'LINESTRING(-87.6766 41.8813, -87.6718 41.8814, -87.6620 41.8816)', radius: 0.002 },
  { name: 'neighbourhood (~10 km²)', geometry: box(-87.70, 41.86, -87.66, 41.89) },
  { name: 'city (Chicago, ~750 km²)', geometry: box(-87.95, 41.7, -87.68, 42.0) },
  { name: 'metro (Los Angeles, ~13,000 km²)', geometry: box(-118.95, 33.7, -117.65, 34.82) },
  { name: 'state (Illinois)', geometry: ILLINOIS },
  { name: 'state (California)', geometry: CALIFORNIA },
];
const CITY = 3;

const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

const dataDir = await mkdtemp(join(os.tmpdir(), 'risk-bench-'));
const database = await testDatabase();
const started = Date.now();
const { stack, riskEm } = await buildRiskStack(dataDir, database.env);
const base = await stack.gateway.app.listen({ host: '127.0.0.1', port: 0 });
const listening = Date.now();
console.log(`Stack listening in ${((listening - started) / 1000).toFixed(1)} s (risk subgraph) on ${database.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}`);
// The first start loads the shipped FARS crashes and builds the aggregates in the background.
await riskDataLoaded(riskEm);
const areaPool = areaPoolFor(riskEm);
console.log(`Crash data loaded and aggregated ${((Date.now() - started) / 1000).toFixed(1)} s after the start (${((Date.now() - listening) / 1000).toFixed(1)} s after listening)`);

interface Row {
  area: string; status: number; areaKm2: number; coveredKm2: number; resolution: number | null; cellsTouched: number; runs: number;
  medianMs: number; p95Ms: number; minMs: number; warmMedianMs: number; warmP95Ms: number; crashes: number;
}
const rows: Row[] = [];
const deadline = Date.now() + BUDGET_MS;
try {
  // Round-robin over the areas (one warm-up round first), so a machine whose load varies over time
  // affects every area alike.
  const urls = AREAS.map((area) => `${base}/riskIndex/v1/all?${new URLSearchParams({ geometry: area.geometry, ...(area.radius ? { radius: String(area.radius) } : {}) })}`);
  const times: number[][] = AREAS.map(() => []);
  const warmTimes: number[][] = AREAS.map(() => []);
  const last: (Record<string, Record<string, number>> | null)[] = AREAS.map(() => null);
  const get = async (i: number) => {
    const t0 = performance.now();
    const res = await fetch(urls[i]);
    const body = await res.json() as Record<string, Record<string, number>>;
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`${AREAS[i].name}: HTTP ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
    last[i] = body;
    return ms;
  };
  for (let round = 0; round < RUNS + 1 && Date.now() < deadline; round++) {
    for (const i of urls.keys()) {
      areaPool.forgetAreas();
      const cold = await get(i);
      const warm = await get(i);
      if (round > 0) { times[i].push(cold); warmTimes[i].push(warm); }
    }
  }
  for (const [i, area] of AREAS.entries()) {
    const body = last[i];
    const sorted = [...times[i]].sort((a, b) => a - b);
    const warm = [...warmTimes[i]].sort((a, b) => a - b);
    if (!body || !sorted.length) { console.log(`${area.name}: skipped (time budget spent)`); continue; }
    const a = body.area;
    rows.push({
      area: area.name, status: 200, areaKm2: round(a.areaKm2), coveredKm2: round(a.coveredKm2), resolution: a.resolution,
      cellsTouched: a.cellsTouched, runs: sorted.length, medianMs: round(percentile(sorted, 50)), p95Ms: round(percentile(sorted, 95)),
      minMs: round(sorted[0]), warmMedianMs: round(percentile(warm, 50)), warmP95Ms: round(percentile(warm, 95)), crashes: body.accidentSummary.total,
    });
  }
} finally {
  await stack.close();
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
}

console.log('\nGET /riskIndex/v1/all (every data set), sequential requests round-robin over the areas, after one warm-up round;'
  + ' cold: the resolved-area cache emptied first (comparable with the figures before that cache), warm: the same area asked again');
console.table(rows.map((r) => ({
  area: r.area, 'km²': r.areaKm2, res: r.resolution, cells: r.cellsTouched, crashes: r.crashes, runs: r.runs,
  'min ms': r.minMs, 'median ms': r.medianMs, 'p95 ms': r.p95Ms, 'warm median ms': r.warmMedianMs, 'warm p95 ms': r.warmP95Ms,
})));
console.log(`Load average during the run: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs`);
const city = rows.find((r) => r.area === AREAS[CITY].name);
const largest = rows.find((r) => r.area === AREAS[AREAS.length - 1].name);
const ratio = city && largest ? round(largest.medianMs / city.medianMs, 2) : null;
if (ratio !== null) console.log(`Largest area (California) / city median latency: ${ratio}x (${largest!.medianMs} ms vs ${city!.medianMs} ms)`);

const out = join(import.meta.dirname, 'results');
await mkdir(out, { recursive: true });
const file = join(out, `risk-areas-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
await writeFile(file, JSON.stringify({
  benchmark: 'risk-areas', at: new Date().toISOString(), database: database.env.DATABASE_URL ? 'postgresql' : 'pglite', runsPerArea: RUNS,
  machine: { cpus: os.cpus().length, loadAverage: os.loadavg(), node: process.version }, rows, largestToCityMedianRatio: ratio,
}, null, 2));
console.log(`Wrote ${file}`);
