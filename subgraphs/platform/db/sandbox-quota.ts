import type { EventArgs, EventSubscriber } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError } from '../errors.ts';
import { TENANT_FILTER, type TenantParams } from './tenant.ts';

/**
 * The sandbox quota: a sandbox organisation holds at most `max` rows of each partner-owned kind in
 * an area (SANDBOX_MAX_RECORDS); a write past it is CONFLICT naming the quota, until a reset. Live
 * organisations are never counted. Rows made in one flush are counted as the flush starts.
 */
export class SandboxQuotaSubscriber implements EventSubscriber {
  private readonly max: number;
  constructor(max: number) { this.max = max; }

  async beforeCreate(args: EventArgs<{ orgId?: string }>) {
    const column = args.meta.properties.orgId?.fieldNames[0];
    const params = args.em.getFilterParams<Partial<TenantParams>>(TENANT_FILTER);
    if (!column || !params?.sandbox || !params.orgId) return;
    const em = args.em as SqlEntityManager;
    const table = `"${args.meta.schema ?? em.config.get('schema')}"."${args.meta.tableName}"`;
    const [row] = await em.getConnection().execute<{ held: number }[]>(
      `select count(*)::int as held from ${table} where "${column}" = ?`, [params.orgId], 'all', em.getTransactionContext());
    if (Number(row?.held) >= this.max) {
      throw new AppError('CONFLICT', `The sandbox holds its quota of ${this.max} ${args.meta.className} records: ` +
        'reset it (POST /platform/sandbox/v1/reset)', { quota: 'SANDBOX_MAX_RECORDS', limit: this.max });
    }
  }
}
