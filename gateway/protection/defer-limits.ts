import { createRequire } from 'node:module';
import type { ApolloServerPlugin } from '@apollo/server';
import type * as GraphQL from 'graphql';
import { GraphQLError, Kind, visit, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode } from 'graphql';
import type { CostDirectives } from '../../subgraphs/platform/cost/directives.ts';
import { deferredFragmentCount } from '../../subgraphs/platform/cost/estimate.ts';

const { getVariableValues } = createRequire(import.meta.url)('graphql') as typeof GraphQL;

const refusal = (message: string, extensions: Record<string, unknown> = {}) =>
  new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', ...extensions, http: { status: 400 } } });

/** Whether the operation, or a fragment it spreads (at any depth), holds `@defer`. */
function usesDefer(operation: OperationDefinitionNode, fragments: Record<string, FragmentDefinitionNode>): boolean {
  const seen = new Set<string>();
  const pending: (OperationDefinitionNode | FragmentDefinitionNode)[] = [operation];
  for (let node = pending.pop(); node; node = pending.pop()) {
    let found = false;
    visit(node, {
      Directive(directive) { if (directive.name.value === 'defer') found = true; },
      FragmentSpread({ name: { value } }) {
        if (!seen.has(value) && fragments[value]) { seen.add(value); pending.push(fragments[value]); }
      },
    });
    if (found) return true;
  }
  return false;
}

const fragmentsOf = (document: DocumentNode) => Object.fromEntries(document.definitions
  .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
  .map((d) => [d.name.value, d]));

/** Whether each operation holds @defer: Apollo's document cache hands the same operation over again (a subscription's every event). */
const deferring = new WeakMap<OperationDefinitionNode, boolean>();

/**
 * The bounds on @defer, checked once the operation is known and before anything runs (see docs/graphql.md
 * "Deferred fragments"): a mutation or subscription with `@defer` is refused (400 BAD_REQUEST naming its type:
 * a write's answer is one piece; subscriptions run elsewhere), and so is a query that may deliver more than
 * `maxDeferred` (GRAPHQL_MAX_DEFERRED) deferred fragments, one inside a list counted once per item the cost
 * estimate gives that list.
 */
export function deferLimitsPlugin(directives: CostDirectives, maxDeferred: number): ApolloServerPlugin {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, request }: { schema: GraphQL.GraphQLSchema; document: DocumentNode; operation?: OperationDefinitionNode | null; request: { variables?: Record<string, unknown> } }) {
          if (!operation) return;
          let defers = deferring.get(operation);
          if (defers === undefined) deferring.set(operation, defers = usesDefer(operation, fragmentsOf(document)));
          if (!defers) return;
          const fragments = fragmentsOf(document);
          if (operation.operation !== 'query') {
            throw refusal(`@defer is not supported in a ${operation.operation}: only queries deliver deferred fragments`, { operationType: operation.operation });
          }
          const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {});
          // Invalid variables are refused by execution before any resolver runs.
          if (coerced.errors) return;
          const deferred = deferredFragmentCount({ schema, operation, fragments, variables: coerced.coerced, directives });
          if (deferred <= maxDeferred) return;
          throw refusal(`The operation may deliver ${deferred} deferred fragments, over the limit of ${maxDeferred} (GRAPHQL_MAX_DEFERRED); `
            + 'a @defer inside a list counts once per item the list may hold: defer the list instead, or ask for a smaller page', { deferred, maxDeferred });
        },
      };
    },
  };
}
