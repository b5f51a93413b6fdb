import { Kind, type DocumentNode, type FragmentDefinitionNode, type SelectionSetNode } from 'graphql';

/**
 * The root fields an operation selects, by field name, one entry per occurrence (each alias), through
 * inline fragments and fragment spreads (a fragment spread twice counts once: GraphQL merges it).
 */
export function rootFieldNames(operation: { selectionSet: SelectionSetNode }, document: DocumentNode): string[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const seen = new Set<string>();
  const names = (set: SelectionSetNode): string[] => set.selections.flatMap((selection) => {
    if (selection.kind === Kind.FIELD) return [selection.name.value];
    if (selection.kind === Kind.INLINE_FRAGMENT) return names(selection.selectionSet);
    const fragment = fragments.get(selection.name.value);
    if (!fragment || seen.has(fragment.name.value)) return [];
    seen.add(fragment.name.value);
    return names(fragment.selectionSet);
  });
  return names(operation.selectionSet);
}
