/**
 * `node test/bench/risk-stages.ts [--runs=15]`
 *
 * Where a Risk Index /all answer spends its time, stage by stage, in-process (no HTTP, no gateway):
 * area resolution in the geometry workers (the resolved-area cache emptied first), the cell reads, each
 * data set, the JSON of the answer, and the map. Starts the risk subgraph's stack like risk-areas.ts,
 * waits for the crash data, then prints per stage and area the median wall milliseconds and the
 * milliseconds the event loop was busy (event-loop utilisation: work in the workers does not count).
 * Bounded: `runs` rounds over the areas.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { areaPoolFor } from '../../subgraphs/risk/geometry/pool.ts';
import { accidentSummary } from '../../subgraphs/risk/services/accident-summary.ts';
import { describeArea, resolveArea } from '../../subgraphs/risk/services/area.ts';
import { farsInfo } from '../../subgraphs/risk/services/fars-info.ts';
import { riskInfo } from '../../subgraphs/risk/services/risk-info.ts';
import { historicalTraffic, realtimeTraffic } from '../../subgraphs/risk/services/traffic.ts';
import { renderMap } from '../../subgraphs/risk/map/map.ts';
import { testDatabase } from '../support/database.ts';
import { flag, percentile } from './args.ts';
import { box, buildRiskStack, CALIFORNIA, ILLINOIS } from './risk-stack.ts';

const RUNS = Math.round(flag('runs', 15, 100));
const AREAS = [
  { name: 'city (Chicago)', geometry: box(-87.95, 41.7, -87.68, 42.0) },
  { name: 'metro (Los Angeles)', geometry: box(-118.95, 33.7, -117.65, 34.82) },
  { name: 'state (Illinois)', geometry: ILLINOIS },
  { name: 'state (California)', geometry: CALIFORNIA },
];

const dataDir = await mkdtemp(join(os.tmpdir(), 'risk-stages-'));
const database = await testDatabase();
const { stack, riskEm } = await buildRiskStack(dataDir, database.env);
await riskDataLoaded(riskEm);

type Stage = [string, (q: Awaited<ReturnType<typeof resolveArea>>) => Promise<unknown>];
const STAGES: Stage[] = [
  ['crashCells', (q) => q.crashCells()],
  ['trafficCells', (q) => q.trafficCells()],
  ['riskInfo', (q) => riskInfo(q)],
  ['accidentSummary', (q) => accidentSummary(q)],
  ['farsInfo', (q) => farsInfo(q)],
  ['realtimeTraffic', (q) => realtimeTraffic(q)],
  ['historicalTraffic', (q) => historicalTraffic(q)],
  ['map', (q) => renderMap(q)],
];
const times = new Map<string, number[]>();
const busy = new Map<string, number[]>();
const add = (key: string, ms: number, busyMs: number) => {
  times.set(key, [...(times.get(key) ?? []), ms]);
  busy.set(key, [...(busy.get(key) ?? []), busyMs]);
};
/** Wall milliseconds since `start`, and how many of them the event loop was busy. */
const since = (start: { t: number; elu: ReturnType<typeof performance.eventLoopUtilization> }) =>
  [performance.now() - start.t, performance.eventLoopUtilization(start.elu).active] as const;
const mark = () => ({ t: performance.now(), elu: performance.eventLoopUtilization() });
try {
  for (let round = 0; round <= RUNS; round++) {
    for (const area of AREAS) {
      const em = riskEm.fork();
      areaPoolFor(em).forgetAreas();
      let t = mark();
      await areaPoolFor(em).resolve(area.geometry, null, 3000);
      if (round) add(`${area.name}|pool resolve`, ...since(t));
      const q = await resolveArea(em, area.geometry);
      const out: Record<string, unknown> = { area: describeArea(q) };
      for (const [name, run] of STAGES) {
        if (name === 'map') {
          t = mark();
          JSON.stringify(out);
          if (round) add(`${area.name}|JSON`, ...since(t));
        }
        t = mark();
        out[name] = await run(q);
        if (round) add(`${area.name}|${name}`, ...since(t));
      }
    }
  }
} finally {
  await stack.close();
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
}
const median = (list: number[]) => Math.round(percentile([...list].sort((a, b) => a - b), 50) * 10) / 10;
const table: Record<string, Record<string, string>> = {};
for (const [key, list] of times) {
  const [area, stage] = key.split('|');
  (table[stage] ??= {})[area] = `${median(list)} / ${median(busy.get(key)!)}`;
}
console.log(`Median ms per stage, wall / event loop busy (${RUNS} runs, ${database.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}; stages after crashCells reuse its memoised read)`);
console.table(table);
console.log(`Load average: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs`);
