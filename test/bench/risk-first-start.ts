/**
 * `node test/bench/risk-first-start.ts [--runs=1] [--every=20]`
 *
 * How long the event loop is held during a first start's background crash load (the shipped FARS
 * files read, inserted and aggregated; PGlite runs every statement on the event loop). Starts the
 * risk subgraph's stack on a fresh database (PGlite in a fresh DATA_DIR, or a fresh database on DATABASE_URL's
 * server), then until the load has finished: /healthz every `every` ms in turn (answer times) and the
 * event loop's longest stalls (a 5 ms timer's lateness). Prints the worst /healthz answer, its p99,
 * and the five longest stalls with when they happened. Bounded: `runs` starts, 300 s each at most.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { testDatabase } from '../support/database.ts';
import { flag, percentile } from './args.ts';
import { buildRiskStack } from './risk-stack.ts';

const RUNS = Math.round(flag('runs', 1, 5));
const EVERY_MS = flag('every', 20, 1000);
const LIMIT_MS = 300_000;
const round = (v: number) => Math.round(v);

for (let run = 1; run <= RUNS; run++) {
  const dataDir = await mkdtemp(join(os.tmpdir(), 'risk-first-start-'));
  // PGlite on disk under DATA_DIR, as a first `npm start` runs it (in memory, its files grow by copying).
  const database = process.env.DATABASE_URL ? await testDatabase() : { env: {}, drop: async () => undefined };
  const { stack, riskEm } = await buildRiskStack(dataDir, database.env);
  const base = await stack.gateway.app.listen({ host: '127.0.0.1', port: 0 });
  const listening = performance.now();
  const loaded = riskDataLoaded(riskEm);
  let done = false;
  void loaded.finally(() => { done = true; });

  const stalls: { at: number; ms: number }[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - last > 25) stalls.push({ at: (now - listening) / 1000, ms: now - last - 5 });
    last = now;
  }, 5);
  const health: number[] = [];
  try {
    while (!done && performance.now() - listening < LIMIT_MS) {
      const t0 = performance.now();
      const res = await fetch(`${base}/healthz`);
      await res.arrayBuffer();
      health.push(performance.now() - t0);
      await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
    }
    await loaded;
  } finally {
    clearInterval(timer);
    await stack.close();
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
  const sorted = [...health].sort((a, b) => a - b);
  console.log(`Run ${run} (${'DATABASE_URL' in database.env ? 'PostgreSQL' : 'PGlite on disk'}): load finished ${((performance.now() - listening) / 1000).toFixed(1)} s after listening; `
    + `/healthz ${health.length} probes, median ${round(percentile(sorted, 50))} ms, p99 ${round(percentile(sorted, 99))} ms, worst ${round(sorted.at(-1) ?? 0)} ms`);
  console.log(`  longest event-loop stalls: ${stalls.sort((a, b) => b.ms - a.ms).slice(0, 5).map((s) => `${round(s.ms)} ms at ${s.at.toFixed(1)} s`).join(', ')}`);
}
console.log(`Load average: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs`);
