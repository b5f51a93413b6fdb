/**
 * `node test/bench/risk-exports.ts [--runs=3] [--budget=300]`
 *
 * Size and time of the Risk Index exports: starts its own stack (the risk subgraph only, on loopback,
 * against a fresh database: PGlite in memory, or a fresh database on DATABASE_URL's server), then, for
 * the city of Chicago and all of California, downloads each export (cells and crashes, GeoJSON and
 * CSV) whole, following the Link rel="next" pages at the default page size. Prints per export: pages,
 * rows, bytes, wall time of the whole walk (median over the runs), the event loop's busy time during it
 * and its longest stall (the client shares the process but only reads the bytes, so both are the
 * server's share, upper bounds). Bounded: at most `runs` rounds and `budget` seconds.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance as perf } from 'node:perf_hooks';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { testDatabase } from '../support/database.ts';
import { flag, percentile } from './args.ts';
import { box, buildRiskStack, CALIFORNIA } from './risk-stack.ts';

const RUNS = Math.round(flag('runs', 3, 20));
const BUDGET_MS = flag('budget', 300, 900) * 1000;

const AREAS = [
  { name: 'city of Chicago (~750 km²)', geometry: box(-87.95, 41.7, -87.68, 42.0) },
  { name: 'California', geometry: CALIFORNIA },
];
const EXPORTS = [['cells', 'geojson'], ['cells', 'csv'], ['crashes', 'geojson'], ['crashes', 'csv']] as const;

const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;

const dataDir = await mkdtemp(join(os.tmpdir(), 'risk-exports-bench-'));
const database = await testDatabase();
const { stack, riskEm } = await buildRiskStack(dataDir, database.env);
const base = await stack.gateway.app.listen({ host: '127.0.0.1', port: 0 });
await riskDataLoaded(riskEm);
console.log(`Risk subgraph on ${database.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}, crash data loaded`);

/** One whole export: every page through the Link header. */
async function download(path: string) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const elu = perf.eventLoopUtilization();
  const t0 = performance.now();
  let next: string | null = path;
  let pages = 0, bytes = 0, rows = 0;
  while (next) {
    const res = await fetch(`${base}${next}`);
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${next}: HTTP ${res.status} ${text.slice(0, 300)}`);
    pages += 1;
    bytes += Buffer.byteLength(text);
    // Counted without parsing: the process's busy time should be the server's.
    rows += res.headers.get('content-type')!.startsWith('text/csv') ? text.split('\r\n').length - 2 : Number(/"numberReturned":(\d+)/.exec(text)![1]);
    next = res.headers.get('link')?.match(/^<([^>]+)>; rel="next"$/)?.[1] ?? null;
  }
  const ms = performance.now() - t0;
  const busyMs = perf.eventLoopUtilization(elu).active;
  delay.disable();
  return { pages, bytes, rows, ms, busyMs, stallMs: delay.max / 1e6 };
}

const results: Record<string, { pages: number; bytes: number; rows: number; ms: number[]; busyMs: number[]; stallMs: number[] }> = {};
const deadline = Date.now() + BUDGET_MS;
try {
  // One warm-up round (resolved areas cached, workers started), then the measured rounds.
  for (let run = 0; run <= RUNS && Date.now() < deadline; run++) {
    for (const area of AREAS) {
      for (const [data, format] of EXPORTS) {
        const r = await download(`/riskIndex/v1/export/${data}?${new URLSearchParams({ geometry: area.geometry, format })}`);
        if (run === 0) continue;
        const key = `${area.name}|${data}|${format}`;
        results[key] ??= { pages: r.pages, bytes: r.bytes, rows: r.rows, ms: [], busyMs: [], stallMs: [] };
        results[key].ms.push(r.ms);
        results[key].busyMs.push(r.busyMs);
        results[key].stallMs.push(r.stallMs);
      }
    }
  }
} finally {
  await stack.close();
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
}

console.log(`\nWhole exports at the default page size (cells 5,000, crashes 1,000 a page), median of ${RUNS} runs after a warm-up`);
console.table(Object.entries(results).map(([key, r]) => {
  const [area, data, format] = key.split('|');
  return {
    area, export: `${data} ${format}`, pages: r.pages, rows: r.rows, KB: round(r.bytes / 1024),
    'median ms': round(percentile(r.ms, 50)), 'max ms': round(Math.max(...r.ms)), 'event loop busy ms': round(percentile(r.busyMs, 50)),
    'longest stall ms': round(Math.max(...r.stallMs)),
  };
}));
console.log(`Load average during the run: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs`);
