/**
 * `node test/bench/risk-filters.ts [--runs=10]`
 *
 * What a crash filter costs (subgraphs/risk/filter/): riskInfo, accidentSummary and a farsInfo page of
 * one area evaluated without a filter (stored per-cell aggregates) and with one (the cells' crashes
 * read and counted per request), in-process (no HTTP, no answer cache), for a city, a metro and a
 * state. Prints the median wall milliseconds per data set and area. Bounded: `runs` rounds.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { parseCrashFilter, type CrashFilter } from '../../subgraphs/risk/filter/crash-filter.ts';
import { accidentSummary } from '../../subgraphs/risk/services/accident-summary.ts';
import { resolveArea } from '../../subgraphs/risk/services/area.ts';
import { farsInfo } from '../../subgraphs/risk/services/fars-info.ts';
import { riskInfo } from '../../subgraphs/risk/services/risk-info.ts';
import { testDatabase } from '../support/database.ts';
import { flag, percentile } from './args.ts';
import { box, buildRiskStack, CALIFORNIA } from './risk-stack.ts';

const RUNS = Math.round(flag('runs', 10, 100));
const AREAS = [
  { name: 'city (Chicago)', geometry: box(-87.95, 41.7, -87.68, 42.0) },
  { name: 'metro (Los Angeles)', geometry: box(-118.95, 33.7, -117.65, 34.82) },
  { name: 'state (California)', geometry: CALIFORNIA },
];
const FILTERS: [string, CrashFilter | null][] = [
  ['none', null],
  ['night, pedestrian, 2015', parseCrashFilter({ years: [2015], lightConditions: ['Dark - Not Lighted', 'Dark - Lighted'], pedestrians: true })],
];
const SETS = { riskInfo, accidentSummary, farsInfo } as const;

const dataDir = await mkdtemp(join(os.tmpdir(), 'risk-filters-'));
const database = await testDatabase();
const { stack, riskEm } = await buildRiskStack(dataDir, database.env);
await riskDataLoaded(riskEm);
const times = new Map<string, number[]>();
try {
  for (let round = 0; round <= RUNS; round++) {
    for (const area of AREAS) {
      for (const [filterName, filter] of FILTERS) {
        for (const [set, run] of Object.entries(SETS)) {
          // A fresh query each time: nothing memoised from another data set.
          const q = await resolveArea(riskEm.fork(), area.geometry, null, null, filter);
          const start = performance.now();
          await run(q);
          const key = `${set} · ${filterName}|${area.name}`;
          if (round) times.set(key, [...(times.get(key) ?? []), performance.now() - start]);
        }
      }
    }
  }
} finally {
  await stack.close();
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
}
const table: Record<string, Record<string, number>> = {};
for (const [key, list] of times) {
  const [row, area] = key.split('|');
  (table[row] ??= {})[area] = Math.round(percentile([...list].sort((a, b) => a - b), 50) * 10) / 10;
}
console.log(`Median wall ms per data set, without and with a crash filter (${RUNS} runs, ${database.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'})`);
console.table(table);
console.log(`Load average: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs`);
