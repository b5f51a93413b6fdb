import { diff } from '@graphql-inspector/core';
import { apiSchema } from '../../gateway/ide/index.ts';
import type { BreakingChange } from './change.ts';

/**
 * The breaking changes between two supergraphs' API schemas (what partners query, without the join__ machinery), as @graphql-inspector/core rates them
 * (criticality BREAKING; DANGEROUS and NON_BREAKING pass): kind is the inspector's change type,
 * location its path in the schema (e.g. FIELD_REMOVED Query.vehicles).
 */
export async function graphBreakingChanges(baseSdl: string, currentSdl: string): Promise<BreakingChange[]> {
  const changes = await diff(apiSchema(baseSdl), apiSchema(currentSdl));
  return changes.filter((change) => change.criticality.level === 'BREAKING')
    .map((change) => ({ kind: String(change.type), location: change.path ?? 'schema', message: change.message }));
}
