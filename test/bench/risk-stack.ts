/**
 * What the Risk Index benchmarks share: the risk subgraph alone behind the gateway, and the areas
 * they query.
 */
import { geojsonToWKT } from '@terraformer/wkt';
import { buildStack } from '../../gateway/stack.ts';
import { loadConfig, subgraphUrlVariable } from '../../subgraphs/platform/config.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { generateHopKey } from '../../subgraphs/platform/internal-hop.ts';
import { stateBoundaries } from '../../subgraphs/risk/geometry/coverage.ts';

export const [CALIFORNIA, ILLINOIS] = stateBoundaries().map((b) => geojsonToWKT(b.feature.geometry));
export const box = (w: number, s: number, e: number, n: number) => `POLYGON((${w} ${s}, ${e} ${s}, ${e} ${n}, ${w} ${n}, ${w} ${s}))`;

/**
 * Builds the stack with only the risk subgraph: the others are named as remote (and never called).
 * Load shedding is off: the benchmarks measure latency and stalls, not admission.
 */
export async function buildRiskStack(dataDir: string, databaseEnv: Record<string, string>) {
  const unreachable = Object.fromEntries(Object.keys(subgraphDefinitions).filter((n) => n !== 'risk').map((n) => [subgraphUrlVariable(n), 'http://127.0.0.1:9/graphql']));
  const env = {
    ...process.env, NODE_ENV: 'test' as const, LOG_LEVEL: 'warn', DATA_DIR: dataDir, DATABASE_URL: undefined, ...databaseEnv, ...unreachable,
    INTERNAL_HOP_KEY: process.env.INTERNAL_HOP_KEY ?? generateHopKey(), OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
  };
  const stack = await buildStack(loadConfig(env), env);
  return { stack, riskEm: stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em };
}
