import type { AnySubgraphDefinition } from './platform/subgraph.ts';
import { scoring } from './scoring/index.ts';

/** Every subgraph, by the name used in schema/supergraph.yaml. */
export const subgraphDefinitions: Record<string, AnySubgraphDefinition> = {
  scoring,
};
