import { ApolloArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, Kind, type ASTVisitor, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';
import type { Config } from './config.ts';
import { costDirectivesOf } from './cost/directives.ts';
import { demandControlPlugin } from './cost/plugin.ts';

/** Introspection fields (`__schema`, `__type`) per document, and their depth: bounds what introspection can answer. */
export const MAX_INTROSPECTION_FIELDS = 2;
/** Exactly the depth of graphql-js's full introspection query with every option (what GraphiQL sends): TypeRef nests ofType 8 times. */
export const MAX_INTROSPECTION_DEPTH = 15;

export const isIntrospectionRoot = (name: string) => name === '__schema' || name === '__type';

/** Depth of a selection set, following fragments (cycles stop, the standard rule reports them). */
function depthOf(set: SelectionSetNode | undefined, fragments: (name: string) => FragmentDefinitionNode | null | undefined, seen: Set<string>, bound: number): number {
  if (!set || bound <= 0) return 0;
  let deepest = 0;
  for (const selection of set.selections) {
    let depth = 0;
    if (selection.kind === Kind.FIELD) depth = selection.selectionSet ? 1 + depthOf(selection.selectionSet, fragments, seen, bound - 1) : 1;
    else if (selection.kind === Kind.INLINE_FRAGMENT) depth = depthOf(selection.selectionSet, fragments, seen, bound);
    else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      depth = depthOf(fragments(selection.name.value)?.selectionSet, fragments, seen, bound);
      seen.delete(selection.name.value);
    }
    deepest = Math.max(deepest, depth);
    if (deepest > bound) break;
  }
  return deepest;
}

/**
 * Introspection is exempt from the depth and cost limits (an IDE needs its full query), so it gets
 * limits of its own: at most MAX_INTROSPECTION_FIELDS introspection fields, each at most
 * MAX_INTROSPECTION_DEPTH deep. Without them a document of nested `fields { type { fields ...` answers megabytes.
 */
export function introspectionLimitRule(context: ValidationContext): ASTVisitor {
  let count = 0;
  return {
    Field(node) {
      if (!isIntrospectionRoot(node.name.value)) return;
      count += 1;
      if (count === MAX_INTROSPECTION_FIELDS + 1) {
        context.reportError(new GraphQLError(`Introspection limit of ${MAX_INTROSPECTION_FIELDS} __schema/__type fields per document exceeded`, { nodes: [node] }));
      }
      const depth = 1 + depthOf(node.selectionSet, (name) => context.getFragment(name), new Set(), MAX_INTROSPECTION_DEPTH + 1);
      if (depth > MAX_INTROSPECTION_DEPTH) {
        context.reportError(new GraphQLError(`Introspection depth limit of ${MAX_INTROSPECTION_DEPTH} exceeded`, { nodes: [node] }));
      }
    },
  };
}

/**
 * Depth, alias, cost, token, introspection and answer-size limits on every GraphQL document the
 * gateway accepts (REST rows included) and every listening subgraph accepts: one implementation for
 * both. `sdl` is the schema's source (the supergraph, or the subgraph's file), whose `@listSize` and
 * `@cost` the cost estimate reads. Depth, alias and introspection rejections are
 * GRAPHQL_VALIDATION_FAILED naming the limit; cost is COST_LIMIT_EXCEEDED and an oversized answer
 * RESPONSE_TOO_LARGE (see cost/plugin.ts); over the token limit the document is not parsed at all
 * (GRAPHQL_PARSE_FAILED). All answer HTTP 400.
 */
export function graphqlLimits(config: Config, sdl: DocumentNode) {
  const armor = new ApolloArmor({
    maxDepth: { n: config.GRAPHQL_MAX_DEPTH, ignoreIntrospection: true, exposeLimits: true },
    maxAliases: { n: config.GRAPHQL_MAX_ALIASES, exposeLimits: true },
    // Armor's estimate ignores list sizes (an omitted or variable `first` counted as 1): cost/ replaces it.
    costLimit: { enabled: false },
    // Counted by graphql-js's own parser (parseOptions below): armor's plugin throws outside parsing, which answers 500.
    maxTokens: { enabled: false },
    maxDirectives: { n: 50, exposeLimits: true },
    blockFieldSuggestion: { enabled: !config.GRAPHQL_INTROSPECTION },
  });
  const { validationRules, plugins } = armor.protect();
  const directives = costDirectivesOf(sdl);
  return {
    /** The schema's `@cost` and `@listSize`, as the cost estimate reads them. */
    directives,
    validationRules: [...validationRules, introspectionLimitRule],
    plugins: [...plugins, demandControlPlugin(directives, { maxCost: config.GRAPHQL_MAX_COST, maxResponseObjects: config.GRAPHQL_MAX_RESPONSE_OBJECTS })],
    parseOptions: { maxTokens: config.GRAPHQL_MAX_TOKENS },
  };
}
