/**
 * `node test/bench/risk-stages.ts [--runs=15]`
 *
 * Where a Risk Index /all answer spends its time, stage by stage, in-process (no HTTP, no gateway):
 * area resolution in the geometry workers, the cell reads, each data set and the JSON of the answer.
 * Starts the risk subgraph's stack like risk-areas.ts, waits for the crash data, then prints the median
 * milliseconds of each stage per area. Bounded: `runs` rounds over the areas.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { geojsonToWKT } from '@terraformer/wkt';
import { buildStack } from '../../gateway/stack.ts';
import { loadConfig, subgraphUrlVariable } from '../../subgraphs/platform/config.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { generateHopKey } from '../../subgraphs/platform/internal-hop.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/load.ts';
import { stateBoundaries } from '../../subgraphs/risk/geometry/coverage.ts';
import { areaPoolFor } from '../../subgraphs/risk/geometry/pool.ts';
import { accidentSummary } from '../../subgraphs/risk/services/accident-summary.ts';
import { describeArea, resolveArea } from '../../subgraphs/risk/services/area.ts';
import { farsInfo } from '../../subgraphs/risk/services/fars-info.ts';
import { riskInfo } from '../../subgraphs/risk/services/risk-info.ts';
import { historicalTraffic, realtimeTraffic } from '../../subgraphs/risk/services/traffic.ts';
import { testDatabase } from '../support/database.ts';
import { flag, percentile } from './args.ts';

const RUNS = Math.round(flag('runs', 15, 100));
const [california, illinois] = stateBoundaries().map((b) => geojsonToWKT(b.feature.geometry));
const box = (w: number, s: number, e: number, n: number) => `POLYGON((${w} ${s}, ${e} ${s}, ${e} ${n}, ${w} ${n}, ${w} ${s}))`;
const AREAS = [
  { name: 'city (Chicago)', geometry: box(-87.95, 41.7, -87.68, 42.0) },
  { name: 'metro (Los Angeles)', geometry: box(-118.95, 33.7, -117.65, 34.82) },
  { name: 'state (Illinois)', geometry: illinois },
  { name: 'state (California)', geometry: california },
];

const dataDir = await mkdtemp(join(os.tmpdir(), 'risk-stages-'));
const database = await testDatabase();
const unreachable = Object.fromEntries(Object.keys(subgraphDefinitions).filter((n) => n !== 'risk').map((n) => [subgraphUrlVariable(n), 'http://127.0.0.1:9/graphql']));
const env = {
  ...process.env, NODE_ENV: 'test' as const, LOG_LEVEL: 'warn', DATA_DIR: dataDir, DATABASE_URL: undefined, ...database.env, ...unreachable,
  INTERNAL_HOP_KEY: process.env.INTERNAL_HOP_KEY ?? generateHopKey(), OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
};
const stack = await buildStack(loadConfig(env), env);
const db = stack.subgraphs.find((s) => s.name === 'risk')!.db;
await riskDataLoaded(db.orm.em);

type Stage = [string, (q: Awaited<ReturnType<typeof resolveArea>>) => Promise<unknown>];
const STAGES: Stage[] = [
  ['crashCells', (q) => q.crashCells()],
  ['trafficCells', (q) => q.trafficCells()],
  ['riskInfo', (q) => riskInfo(q)],
  ['accidentSummary', (q) => accidentSummary(q)],
  ['farsInfo', (q) => farsInfo(q)],
  ['realtimeTraffic', (q) => realtimeTraffic(q)],
  ['historicalTraffic', (q) => historicalTraffic(q)],
];
const times = new Map<string, number[]>();
const cpu = new Map<string, number[]>();
const add = (key: string, ms: number, cpuMs: number) => {
  times.set(key, [...(times.get(key) ?? []), ms]);
  cpu.set(key, [...(cpu.get(key) ?? []), cpuMs]);
};
/** Wall and CPU (every thread of the process: the geometry workers' too) milliseconds since `start`. */
const since = (start: { t: number; c: NodeJS.CpuUsage }) => {
  const c = process.cpuUsage(start.c);
  return [performance.now() - start.t, (c.user + c.system) / 1000] as const;
};
const mark = () => ({ t: performance.now(), c: process.cpuUsage() });
try {
  for (let round = 0; round <= RUNS; round++) {
    for (const area of AREAS) {
      const em = db.orm.em.fork();
      let t = mark();
      await areaPoolFor(em).resolve(area.geometry, null, 3000);
      if (round) add(`${area.name}|pool resolve`, ...since(t));
      const q = await resolveArea(em, area.geometry);
      const out: Record<string, unknown> = { area: describeArea(q) };
      for (const [name, run] of STAGES) {
        t = mark();
        out[name] = await run(q);
        if (round) add(`${area.name}|${name}`, ...since(t));
      }
      t = mark();
      JSON.stringify(out);
      if (round) add(`${area.name}|JSON`, ...since(t));
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
  (table[stage] ??= {})[area] = `${median(list)} / ${median(cpu.get(key)!)}`;
}
console.log(`Median ms per stage, wall / CPU (${RUNS} runs, ${database.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}; stages after crashCells reuse its memoised read)`);
console.table(table);
console.log(`Load average: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs`);
