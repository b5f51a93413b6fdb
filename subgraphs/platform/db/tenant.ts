import { p, type EntityManager, type EventArgs, type EventSubscriber, type MetadataStorage } from '@mikro-orm/core';
import { AppError } from '../errors.ts';

export const TENANT_FILTER = 'tenant';

/** The organisation column every partner-owned entity carries; spread it into `properties`. */
export const tenantProperties = {
  orgId: p.string().length(128),
};

/** An EntityManager's tenant parameters: the organisation, and whether it is a sandbox (docs/sandbox.md). */
export interface TenantParams { orgId: string; sandbox?: boolean }

/** True when `em` works for a sandbox organisation. */
export const inSandbox = (em: EntityManager) => em.getFilterParams<Partial<TenantParams>>(TENANT_FILTER)?.sandbox === true;

/** Names of the entities that carry `orgId`, so the tenant filter applies to exactly those. */
export const tenantEntityNames = (metadata: MetadataStorage) =>
  [...metadata].filter((meta) => meta.properties.orgId && !meta.embeddable).map((meta) => meta.className);

/** A filter that is on by default and fails closed: a query without an organisation throws. */
export const tenantFilter = (entity: string[]) => ({
  // MikroORM accepts entity names at run time; its typing wants classes.
  name: TENANT_FILTER,
  entity: entity as never,
  default: true,
  cond: (args: TenantParams) => {
    if (!args?.orgId) throw new AppError('INTERNAL_SERVER_ERROR', 'query ran without an organisation');
    return { orgId: args.orgId };
  },
});

/**
 * Stamps new rows with the organisation of the EntityManager that creates them and refuses a row
 * stamped with, or moved to, another organisation. Services never set `orgId` themselves.
 */
export class TenantSubscriber implements EventSubscriber {
  beforeCreate(args: EventArgs<{ orgId?: string }>) {
    if (!args.meta.properties.orgId) return;
    const orgId = args.em.getFilterParams<TenantParams>(TENANT_FILTER)?.orgId;
    if (!orgId) throw new AppError('INTERNAL_SERVER_ERROR', 'row created without an organisation');
    if (args.entity.orgId && args.entity.orgId !== orgId) throw new AppError('FORBIDDEN', 'row belongs to another organisation');
    args.entity.orgId = orgId;
  }

  beforeUpdate(args: EventArgs<{ orgId?: string }>) {
    if (args.changeSet?.payload && 'orgId' in args.changeSet.payload) {
      throw new AppError('FORBIDDEN', 'a row cannot move to another organisation');
    }
  }
}
