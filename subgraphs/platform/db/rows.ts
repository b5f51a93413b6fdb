import { ReferenceKind, type EntityManager, type EntityMetadata, type EntityName, type EntityProperty, type Platform } from '@mikro-orm/core';
import { AppError } from '../errors.ts';
import { TENANT_FILTER } from './tenant.ts';

/**
 * Read-only rows for the hot lookups (DataLoaders), without MikroORM's query building, entity
 * hydration and identity map: one fixed SQL text per lookup (read-statement.ts), its select list
 * built once from the entity's metadata, each row mapped to a plain object with the entity's
 * property names and the values hydration would give them (Dates, numbers of `bigint('number')`,
 * custom types).
 * Nothing read this way is managed: never persist or modify it; services load entities themselves.
 */

/** An entity's scalar properties as plain data. */
export type Plain<T> = { [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: T[K] };

export interface RowShape<T> {
  /** `"schema"."table"`. */
  table: string;
  /** Whether rows carry the organisation (every read must then be scoped to it). */
  tenant: boolean;
  /**
   * The select list, every column aliased to its property name (after `prefix`, for the columns of
   * a joined table), prefixed with `alias.`; built once per alias and prefix.
   */
  columns(alias: string, prefix?: string): string;
  /** The quoted column of a property (`orgId` included). */
  column(property: (keyof T & string) | 'orgId'): string;
  map(row: Record<string, unknown>): Plain<T>;
  /** The row of the columns selected with `prefix` (a joined table's), or null when the join found none. */
  mapPrefixed(row: Record<string, unknown>, prefix: string): Plain<T> | null;
}

type Convert = (value: unknown) => unknown;

function converter(prop: EntityProperty, platform: Platform): Convert | null {
  if (prop.customType) {
    const type = prop.customType;
    return (value) => type.convertToJSValue(value, platform);
  }
  if (prop.runtimeType === 'Date') return (value) => (value instanceof Date ? value : new Date(value as string));
  if (prop.runtimeType === 'boolean') return (value) => Boolean(value);
  return null;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

const shapes = new WeakMap<EntityMetadata, RowShape<never>>();

/** The row shape of an entity of `em`'s ORM: its scalar columns; any other kind of property is refused. */
export function rowShape<T extends object>(em: EntityManager, entity: EntityName<T>): RowShape<T> {
  const meta = em.getMetadata().get(entity);
  const properties = meta.properties as Record<string, EntityProperty | undefined>;
  const known = shapes.get(meta);
  if (known) return known as unknown as RowShape<T>;
  const platform = em.getPlatform();
  const props = meta.props.filter((prop) => prop.persist !== false && prop.name !== 'orgId');
  const unsupported = props.filter((prop) => prop.kind !== ReferenceKind.SCALAR || prop.fieldNames.length !== 1);
  if (unsupported.length) throw new Error(`rowShape(${meta.className}): only scalar properties are read as rows (${unsupported.map((p) => p.name).join(', ')})`);
  const fields = new Map<string, string>(props.map((prop) => [prop.name, prop.fieldNames[0]]));
  const converters = props.flatMap((prop) => {
    const convert = converter(prop, platform);
    return convert ? [[prop.name, convert] as const] : [];
  });
  const schema = em.config.get('schema');
  const selects = new Map<string, string>();
  const shape: RowShape<T> = {
    table: schema ? `${quote(schema)}.${quote(meta.tableName)}` : quote(meta.tableName),
    tenant: Boolean(properties.orgId),
    columns: (alias, prefix = '') => {
      let list = selects.get(`${alias}|${prefix}`);
      if (!list) selects.set(`${alias}|${prefix}`, list = props.map((prop) => `${alias}.${quote(prop.fieldNames[0])} as ${quote(prefix + prop.name)}`).join(', '));
      return list;
    },
    column: (property) => {
      const field = property === 'orgId' ? properties.orgId?.fieldNames[0] : fields.get(property);
      if (!field) throw new Error(`rowShape(${meta.className}): no column for ${property}`);
      return quote(field);
    },
    map: (row) => {
      for (const [name, convert] of converters) {
        const value = row[name];
        if (value != null) row[name] = convert(value);
      }
      return row as Plain<T>;
    },
    mapPrefixed: (row, prefix) => {
      const own: Record<string, unknown> = {};
      for (const prop of props) own[prop.name] = row[prefix + prop.name];
      // The primary key is never null in a row that exists.
      if (own[meta.primaryKeys[0]] == null) return null;
      return shape.map(own);
    },
  };
  shapes.set(meta, shape as unknown as RowShape<never>);
  return shape;
}

/**
 * The organisation the request's EntityManager is scoped to (the tenant filter's parameter). A read
 * of partner rows without one fails closed, exactly as the tenant filter does.
 */
export function tenantOf(em: EntityManager): string {
  const orgId = em.getFilterParams<{ orgId?: string }>(TENANT_FILTER)?.orgId;
  if (!orgId) throw new AppError('INTERNAL_SERVER_ERROR', 'query ran without an organisation');
  return orgId;
}
