import { createRequire } from 'node:module';
import type { ApolloServerPlugin } from '@apollo/server';
import type * as GraphQL from 'graphql';
import { GraphQLError, Kind, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import type { CostDirectives } from './directives.ts';
import { operationCost } from './estimate.ts';
import { holdsMoreObjectsThan } from './response-size.ts';

const { getVariableValues } = createRequire(import.meta.url)('graphql') as typeof GraphQL;

export interface DemandControlLimits {
  /** GRAPHQL_MAX_COST */
  maxCost: number;
  /** GRAPHQL_MAX_RESPONSE_OBJECTS */
  maxResponseObjects: number;
}

export const RESPONSE_TOO_LARGE = 'RESPONSE_TOO_LARGE';

/** The values, and whether anything read them (a property, a key, its presence). */
function watched(values: Record<string, unknown>) {
  const seen = { read: false };
  const touch = <R>(result: R) => { seen.read = true; return result; };
  const proxy = new Proxy(values, {
    get: (target, key) => touch(Reflect.get(target, key)),
    has: (target, key) => touch(Reflect.has(target, key)),
    getOwnPropertyDescriptor: (target, key) => touch(Reflect.getOwnPropertyDescriptor(target, key)),
    ownKeys: (target) => touch(Reflect.ownKeys(target)),
  });
  return { proxy, seen };
}

/** The RESPONSE_TOO_LARGE error (formatted), also ending an incremental answer past the limit (gateway/query-plan-executor). */
export const tooLarge = (maxObjects: number) => ({
  message: `The answer would hold more than ${maxObjects} objects; ask for less (smaller pages, fewer fields or aliases)`,
  extensions: { code: RESPONSE_TOO_LARGE, maxObjects },
});

/**
 * Demand control, in one plugin for the gateway (against the supergraph) and every listening subgraph
 * (against its own schema):
 * - before any execution, an operation whose estimated cost (see operationCost) is over `maxCost` is
 *   refused with COST_LIMIT_EXCEEDED (HTTP 400), naming the cost and the limit: nothing runs, so a
 *   mutation commits nothing;
 * - an answer holding more than `maxResponseObjects` objects, or one a subgraph already refused as
 *   such, becomes one RESPONSE_TOO_LARGE error (HTTP 400).
 */
export function demandControlPlugin(directives: CostDirectives, limits: DemandControlLimits): ApolloServerPlugin {
  // An operation whose cost reads no variable (none in a slicing argument or in @skip/@include)
  // costs the same on every request of its cached document: one within budget is estimated once.
  const withinBudget = new WeakSet<OperationDefinitionNode>();
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, request }) {
          if (!operation || withinBudget.has(operation)) return;
          const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {});
          // Invalid variables are refused by execution before any resolver runs.
          if (coerced.errors) return;
          const fragments = Object.fromEntries(document.definitions
            .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
            .map((d) => [d.name.value, d]));
          const variables = watched(coerced.coerced);
          const cost = operationCost({ schema, operation, fragments, variables: variables.proxy, directives });
          if (cost <= limits.maxCost) {
            if (!variables.seen.read) withinBudget.add(operation);
            return;
          }
          throw new GraphQLError(`Estimated cost ${cost} is over the limit of ${limits.maxCost}: ask for smaller pages (first), fewer nested lists or fewer aliases`, {
            extensions: { code: 'COST_LIMIT_EXCEEDED', cost, maxCost: limits.maxCost, http: { status: 400 } },
          });
        },
        async willSendResponse({ response }) {
          if (response.body.kind !== 'single') return;
          const result = response.body.singleResult;
          const refusedBelow = result.errors?.some((e) => e.extensions?.code === RESPONSE_TOO_LARGE);
          if (!refusedBelow && !holdsMoreObjectsThan(result.data, limits.maxResponseObjects)) return;
          response.body.singleResult = { errors: [tooLarge(limits.maxResponseObjects)] };
          response.http.status = 400;
        },
      };
    },
  };
}
