import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import type { SubgraphContext } from '../context.ts';
import { forbidden, unauthenticated } from '../errors.ts';
import { TENANT_FILTER, type TenantParams } from './tenant.ts';

/** The partner-owned tables of `em`'s database, as `"schema"."table"` with their organisation column. */
function tenantTables(em: EntityManager) {
  return [...em.getMetadata()]
    .filter((meta) => meta.properties.orgId && !meta.embeddable)
    .map((meta) => ({ table: `"${meta.schema ?? em.config.get('schema')}"."${meta.tableName}"`, column: meta.properties.orgId!.fieldNames[0] }));
}

/**
 * Empties the caller's sandbox in this area: every partner-owned row of its organisation, in one
 * transaction (POST /platform/sandbox/v1/reset, docs/sandbox.md). Only a sandbox token may; a live
 * organisation is never touched. A table another one references (a foreign key) is emptied after it.
 * Returns the rows deleted.
 */
export async function emptySandbox(ctx: SubgraphContext): Promise<number> {
  if (ctx.authError) throw ctx.authError;
  if (!ctx.caller) throw unauthenticated();
  const params = ctx.em.getFilterParams<Partial<TenantParams>>(TENANT_FILTER);
  if (!ctx.caller.sandbox || !params?.sandbox || !params.orgId) throw forbidden('Only a sandbox client\'s token may reset a sandbox');
  const orgId = params.orgId;
  return (ctx.em as SqlEntityManager).transactional(async (tx) => {
    const connection = tx.getConnection();
    const run = (sql: string, values: unknown[] = []) => connection.execute<unknown[]>(sql, values, 'all', tx.getTransactionContext());
    let left = tenantTables(tx);
    let deleted = 0;
    while (left.length) {
      const refused: typeof left = [];
      for (const { table, column } of left) {
        await run('savepoint sandbox_reset');
        try {
          deleted += (await run(`delete from ${table} where "${column}" = ? returning 1`, [orgId])).length;
          await run('release savepoint sandbox_reset');
        } catch (error) {
          if ((error as { code?: string }).code !== '23503') throw error;
          await run('rollback to savepoint sandbox_reset');
          refused.push({ table, column });
        }
      }
      if (refused.length === left.length) throw new Error(`sandbox reset: ${refused.map((r) => r.table).join(', ')} stay referenced`);
      left = refused;
    }
    return deleted;
  });
}

/**
 * An area's resolvers of `SandboxReset` (Mutation.resetSandbox): resolving the entity empties the
 * area's part of the caller's sandbox, and `field` answers how many records went. The query planner
 * fetches it from every area the reset selects, after the mutation's own area.
 */
export const sandboxResetPart = (field: string) => ({
  __resolveReference: async (ref: { id: string }, ctx: SubgraphContext) => ({ id: ref.id, [field]: await emptySandbox(ctx) }),
});
