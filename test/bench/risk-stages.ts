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
import { renderMap } from '../../subgraphs/risk/map/map.ts';
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
      const em = db.orm.em.fork();
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
