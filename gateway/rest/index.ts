import { subgraphDefinitions } from '../../subgraphs/index.ts';
import type { RestRoute } from '../../subgraphs/platform/rest/types.ts';

/**
 * The areas' tables in the order the route table and the OpenAPI document have always listed them (not
 * the registry's order): a new area's table goes at the end, so that the committed document only grows.
 */
const AREA_ORDER = ['scoring', 'booking', 'risk', 'registration', 'roadside', 'webhooks'];

const unordered = Object.values(subgraphDefinitions).filter((d) => d.rest && !AREA_ORDER.includes(d.name));
if (unordered.length) throw new Error(`REST tables missing from AREA_ORDER: ${unordered.map((d) => d.name).join(', ')}`);

/** Every REST compatibility path: each area's table, as its definition declares it. */
export const restRoutes: readonly RestRoute[] = AREA_ORDER.flatMap((name) => subgraphDefinitions[name]?.rest ?? []);
