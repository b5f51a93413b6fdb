import { Kind, type DocumentNode, type StringValueNode } from 'graphql';

type Entity = Record<string, unknown>;

/**
 * The `id` of every entity type (`@key`) that declares one in `typeDefs`: its type name and its key,
 * e.g. `Vehicle:1HGCM82633A004352`. Keys are unique per organisation, so the id is too; a client
 * cache (Apollo Client's InMemoryCache) normalises the object by it with no configuration.
 */
export function entityIdResolvers(typeDefs: DocumentNode): Record<string, { id: (entity: Entity) => string }> {
  const resolvers: Record<string, { id: (entity: Entity) => string }> = {};
  for (const definition of typeDefs.definitions) {
    if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION || !definition.fields?.some((f) => f.name.value === 'id')) continue;
    const key = definition.directives?.find((d) => d.name.value === 'key')?.arguments?.find((a) => a.name.value === 'fields')?.value as StringValueNode | undefined;
    if (!key) continue;
    const typename = definition.name.value;
    const fields = key.value.trim().split(/\s+/);
    resolvers[typename] = { id: (entity) => [typename, ...fields.map((field) => String(entity[field]))].join(':') };
  }
  return resolvers;
}
