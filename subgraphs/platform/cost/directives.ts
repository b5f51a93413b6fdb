import { Kind, valueFromASTUntyped, type DirectiveNode, type DocumentNode, type FieldDefinitionNode } from 'graphql';

/** Federation's `@listSize` on one field (https://specs.apollo.dev/cost/v0.1). */
export interface ListSize {
  assumedSize?: number;
  slicingArguments?: readonly string[];
  sizedFields?: readonly string[];
}

/** The demand-control directives of a schema: `@listSize` by `Type.field`, `@cost` weights by `Type.field` and by type. */
export interface CostDirectives {
  listSizes: ReadonlyMap<string, ListSize>;
  fieldWeights: ReadonlyMap<string, number>;
  typeWeights: ReadonlyMap<string, number>;
}

const argumentsOf = (directive: DirectiveNode): Record<string, unknown> =>
  Object.fromEntries((directive.arguments ?? []).map((a) => [a.name.value, valueFromASTUntyped(a.value)]));

const weightOf = (directives: readonly DirectiveNode[] | undefined) => {
  const cost = directives?.find((d) => d.name.value === 'cost');
  return cost ? Number(argumentsOf(cost).weight) : undefined;
};

/**
 * Reads `@listSize` and `@cost` from an SDL document: a subgraph's own file, or the composed
 * supergraph (where composition keeps both under the names the subgraphs imported).
 */
export function costDirectivesOf(sdl: DocumentNode): CostDirectives {
  const listSizes = new Map<string, ListSize>();
  const fieldWeights = new Map<string, number>();
  const typeWeights = new Map<string, number>();
  for (const definition of sdl.definitions) {
    if (!('name' in definition) || !definition.name || !('directives' in definition)) continue;
    const typeName = definition.name.value;
    const typeWeight = weightOf(definition.directives);
    if (typeWeight !== undefined) typeWeights.set(typeName, typeWeight);
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.OBJECT_TYPE_EXTENSION
      && definition.kind !== Kind.INTERFACE_TYPE_DEFINITION && definition.kind !== Kind.INTERFACE_TYPE_EXTENSION) continue;
    for (const field of (definition.fields ?? []) as readonly FieldDefinitionNode[]) {
      const key = `${typeName}.${field.name.value}`;
      const weight = weightOf(field.directives);
      if (weight !== undefined) fieldWeights.set(key, weight);
      const listSize = field.directives?.find((d) => d.name.value === 'listSize');
      if (listSize) listSizes.set(key, argumentsOf(listSize) as ListSize);
    }
  }
  return { listSizes, fieldWeights, typeWeights };
}
