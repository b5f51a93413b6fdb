import { REST_ORDER, subgraphDefinitions } from '../../subgraphs/index.ts';
import type { RestRoute } from '../../subgraphs/platform/rest/types.ts';

const unordered = Object.values(subgraphDefinitions).filter((d) => d.rest && !REST_ORDER.includes(d.name));
if (unordered.length) {
  throw new Error(`REST tables missing from REST_ORDER (subgraphs/index.ts): ${unordered.map((d) => d.name).join(', ')}`);
}

/** Every REST compatibility path: each area's table, as its definition declares it, in REST_ORDER. */
export const restRoutes: readonly RestRoute[] = REST_ORDER.flatMap((name) => subgraphDefinitions[name]?.rest ?? []);
