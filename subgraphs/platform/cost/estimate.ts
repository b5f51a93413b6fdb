import { createRequire } from 'node:module';
import type * as GraphQL from 'graphql';
import type { FieldNode, FragmentDefinitionNode, FragmentSpreadNode, InlineFragmentNode, GraphQLField, GraphQLNamedType, GraphQLSchema, OperationDefinitionNode, SelectionNode, SelectionSetNode } from 'graphql';
import type { CostDirectives, ListSize } from './directives.ts';

// The CommonJS graphql that Apollo Server and the gateway build their schemas with: its type checks
// (instanceof) refuse types from the ESM build a bundler may resolve `import 'graphql'` to.
const { Kind, getArgumentValues, getDirectiveValues, getNamedType, getNullableType, isCompositeType, isInterfaceType, isListType, isObjectType, GraphQLIncludeDirective, GraphQLSkipDirective } =
  createRequire(import.meta.url)('graphql') as typeof GraphQL;

/** Base cost of a mutation, as in Federation's demand control: writes cost more than reads. */
export const MUTATION_COST = 10;
/** Size of a list the schema gives no `@listSize` (a test keeps every list of our SDL annotated). */
export const UNANNOTATED_LIST_SIZE = 100;

export interface CostInput {
  schema: GraphQLSchema;
  operation: OperationDefinitionNode;
  fragments: Record<string, FragmentDefinitionNode>;
  /** Coerced variable values (defaults applied). */
  variables: Record<string, unknown>;
  directives: CostDirectives;
}

/** A connection's size, applied to its sized fields (`nodes`, `edges`) instead of to itself. */
interface Sized { fields: readonly string[]; size: number }

const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);

/** What a walk of the operation counts: each field's own weight, each fragment's, and the operation's base. */
interface Counting {
  field(key: string, type: GraphQLNamedType): number;
  fragment(node: InlineFragmentNode | FragmentSpreadNode, variables: Record<string, unknown>): number;
  base(operation: OperationDefinitionNode): number;
}

/** Whether a fragment is deferred: `@defer` whose `if` is not false (a literal, or a variable's value). */
function isDeferred(node: InlineFragmentNode | FragmentSpreadNode, variables: Record<string, unknown>) {
  const defer = node.directives?.find((d) => d.name.value === 'defer');
  const condition = defer?.arguments?.find((a) => a.name.value === 'if')?.value;
  if (!defer) return false;
  if (condition?.kind === Kind.BOOLEAN) return condition.value;
  if (condition?.kind === Kind.VARIABLE) return variables[condition.name.value] !== false;
  return true;
}

/**
 * The static cost of an operation, after Federation's demand-control model: every object, interface
 * or union value costs 1 (or its `@cost`), scalars and enums 0, a mutation 10 more; a list multiplies
 * the cost of its items by its size. The size comes from `@listSize`: the largest slicing argument
 * given (a variable's value, else the argument's default in the schema), else `assumedSize`; with
 * `sizedFields` it applies to those child fields (a connection's `nodes`), not to the field itself.
 * `_entities` is as long as its `representations`. Fragments are followed (each spread costs what its
 * selections cost, computed once per context), aliases count each, `@skip`/`@include` are honoured,
 * and fragments on different types of an abstract field are all counted (an upper bound).
 * Introspection (`__schema`, `__type`) costs nothing here: it has its own limits.
 */
export function operationCost(input: CostInput): number {
  const { directives } = input;
  return walk(input, {
    field: (key, type) => directives.fieldWeights.get(key) ?? directives.typeWeights.get(type.name) ?? (isCompositeType(type) ? 1 : 0),
    fragment: () => 0,
    base: (operation) => (operation.operation === 'mutation' ? MUTATION_COST : 0),
  });
}

/**
 * How many deferred fragments (`@defer`, `if` not false) an operation may deliver: each once, times the size of
 * every list it is inside, with the sizes of the cost estimate (GRAPHQL_MAX_DEFERRED bounds it).
 */
export const deferredFragmentCount = (input: CostInput): number =>
  walk(input, { field: () => 0, fragment: (node, variables) => Number(isDeferred(node, variables)), base: () => 0 });

function walk({ schema, operation, fragments, variables, directives }: CostInput, counting: Counting): number {
  const spreads = new Map<string, number>();

  const included = (node: SelectionNode) =>
    !getDirectiveValues(GraphQLSkipDirective, node, variables)?.if && getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;

  function listSizeOf(field: GraphQLField<unknown, unknown>, node: FieldNode, annotation: ListSize | undefined): number {
    const args = getArgumentValues(field, node, variables);
    const sliced = (annotation?.slicingArguments ?? []).map((name) => args[name]).filter(isNumber);
    if (sliced.length) return Math.max(0, ...sliced);
    if (annotation?.assumedSize !== undefined) return annotation.assumedSize;
    if (field.name === '_entities' && Array.isArray(args.representations)) return args.representations.length;
    return UNANNOTATED_LIST_SIZE;
  }

  function fieldCost(node: FieldNode, parent: GraphQLNamedType, sized: Sized | undefined): number {
    const name = node.name.value;
    if (name.startsWith('__') || !(isObjectType(parent) || isInterfaceType(parent))) return 0;
    const field = parent.getFields()[name];
    if (!field) return 0;
    const type = getNamedType(field.type);
    const key = `${parent.name}.${name}`;
    const weight = counting.field(key, type);
    const annotation = directives.listSizes.get(key);
    const ownSize = () => (isListType(getNullableType(field.type)) ? listSizeOf(field, node, annotation) : 1);
    // A field its parent sizes (a connection's `nodes`) takes the parent's size instead of its own.
    const size = sized?.fields.includes(name) ? sized.size : ownSize();
    const childSized = annotation?.sizedFields?.length ? { fields: annotation.sizedFields, size: listSizeOf(field, node, annotation) } : undefined;
    const children = node.selectionSet ? selectionCost(node.selectionSet, type, childSized) : 0;
    return size * (weight + children);
  }

  function selectionCost(set: SelectionSetNode, parent: GraphQLNamedType, sized: Sized | undefined): number {
    let total = 0;
    for (const selection of set.selections) {
      if (!included(selection)) continue;
      if (selection.kind === Kind.FIELD) {
        total += fieldCost(selection, parent, sized);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (type) total += counting.fragment(selection, variables) + selectionCost(selection.selectionSet, type, sized);
      } else {
        const fragment = fragments[selection.name.value];
        const type = fragment && schema.getType(fragment.typeCondition.name.value);
        if (!type) continue;
        total += counting.fragment(selection, variables);
        // Memoised: a document spreading fragments into fragments would otherwise cost exponential time to count.
        const key = sized ? `${fragment.name.value}|${sized.fields.join()}|${sized.size}` : fragment.name.value;
        let cost = spreads.get(key);
        if (cost === undefined) {
          cost = selectionCost(fragment.selectionSet, type, sized);
          spreads.set(key, cost);
        }
        total += cost;
      }
    }
    return total;
  }

  const root = schema.getRootType(operation.operation);
  if (!root) return 0;
  return counting.base(operation) + selectionCost(operation.selectionSet, root, undefined);
}
