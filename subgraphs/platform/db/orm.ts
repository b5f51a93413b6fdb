import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MikroORM, type AnyEntity, type EntityClass, type EntitySchema, type Options } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import { btree_gist } from '@electric-sql/pglite/contrib/btree_gist';
import { PgliteDriver } from '@mikro-orm/pglite';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { Config } from '../config.ts';
import { tenantEntityNames, tenantFilter, TenantSubscriber } from './tenant.ts';
import { statementCounter, type StatementCounter } from './statements.ts';

export type Entity = EntityClass<AnyEntity> | EntitySchema;

export interface OrmOptions {
  /** The owner's name: the PostgreSQL schema, and the PGlite folder under DATA_DIR. */
  name: string;
  entities: Entity[];
  /** Folder of the committed migration files. */
  migrationsPath: string;
}

export interface Database {
  orm: MikroORM;
  statements: StatementCounter;
  close(): Promise<void>;
}

function driverOptions(config: Config, name: string): Partial<Options> {
  if (config.DATABASE_URL) {
    return {
      driver: PostgreSqlDriver, clientUrl: config.DATABASE_URL, schema: name, pool: { min: 0, max: config.DB_POOL_MAX },
      // Bounded waits: an unreachable database fails a request in seconds instead of hanging it.
      driverOptions: { connectionTimeoutMillis: config.DB_CONNECT_TIMEOUT_MS, query_timeout: config.DB_QUERY_TIMEOUT_MS },
    };
  }
  const dataDir = config.PGLITE_IN_MEMORY ? 'memory://' : join(config.dataDir, 'pglite', name);
  return { driver: PgliteDriver, dbName: 'postgres', schema: name, driverOptions: { dataDir, extensions: { btree_gist } } };
}

/** Migration options for one owner: committed TypeScript files, history kept in the owner's schema. */
export const migrationOptions = (name: string, path: string) => ({
  path,
  pathTs: path,
  glob: '!(*.d).ts',
  tableName: `${name}.mikro_orm_migrations`,
  transactional: true,
  allOrNothing: true,
  snapshot: false,
  emit: 'ts' as const,
});

/**
 * Runs the owner's committed migrations. On PostgreSQL several owners (and several containers) may
 * start at once and share cluster-wide objects such as extensions, so migrations take a
 * cluster-wide advisory lock, held on a connection of its own, one owner at a time.
 */
async function migrate(orm: MikroORM, config: Config, name: string) {
  const run = async () => {
    await orm.em.getConnection().execute(`create schema if not exists "${name}"`);
    await orm.migrator.up();
  };
  if (!config.DATABASE_URL) return run();
  const lock = new pg.Client({ connectionString: config.DATABASE_URL, connectionTimeoutMillis: config.DB_CONNECT_TIMEOUT_MS });
  await lock.connect();
  try {
    await lock.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await run();
  } finally {
    await lock.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await lock.end();
  }
}

const MIGRATION_LOCK = 4_031_977;

/** One ORM per owner (subgraph or gateway), created at start, migrated, and passed in. */
export async function openDatabase(config: Config, options: OrmOptions): Promise<Database> {
  if (!config.DATABASE_URL && !config.PGLITE_IN_MEMORY) await mkdir(join(config.dataDir, 'pglite'), { recursive: true });
  const statements = statementCounter();
  const orm = await MikroORM.init({
    ...driverOptions(config, options.name),
    entities: options.entities,
    extensions: [Migrator],
    migrations: migrationOptions(options.name, options.migrationsPath),
    subscribers: [new TenantSubscriber()],
    allowGlobalContext: false,
    forceUtcTimezone: true,
    loggerFactory: statements.loggerFactory,
    // MikroORM's own lines (migrations applied...) are not written: the services log what matters.
    logger: () => undefined,
    ignoreUndefinedInQuery: true,
    discovery: { warnWhenNoEntities: false },
  });
  const names = tenantEntityNames(orm.getMetadata());
  if (names.length) orm.em.addFilter(tenantFilter(names));
  await migrate(orm, config, options.name);
  return { orm, statements, close: () => orm.close(true) };
}
