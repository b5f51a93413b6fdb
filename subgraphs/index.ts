import type { AnySubgraphDefinition } from './platform/subgraph.ts';
import { scoring } from './scoring/index.ts';
import { booking } from './booking/index.ts';
import { registration } from './registration/index.ts';
import { risk } from './risk/index.ts';
import { roadside } from './roadside/index.ts';
import { webhooks } from './webhooks/index.ts';

/**
 * Every subgraph, by the name used in schema/supergraph.yaml. The order is the GraphQL IDE's tabs' (the
 * public Risk Index first, which needs no token).
 */
export const subgraphDefinitions: Record<string, AnySubgraphDefinition> = {
  risk,
  scoring,
  booking,
  roadside,
  registration,
  webhooks,
};

/**
 * The areas' REST tables in the order the route table and the OpenAPI document have always listed them (not
 * the registry's): a new area's table goes at the end, so that the committed document only grows.
 */
export const REST_ORDER = ['scoring', 'booking', 'risk', 'registration', 'roadside', 'webhooks'];
