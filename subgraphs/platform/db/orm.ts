import { existsSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MikroORM, type AnyEntity, type EntityClass, type EntitySchema, type Options } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';
import type { PGlite } from '@electric-sql/pglite';
import { btree_gist } from '@electric-sql/pglite/contrib/btree_gist';
import { PgliteDriver } from '@mikro-orm/pglite';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import pg from 'pg';
import { databaseUrl, type Config } from '../config.ts';
import { tenantEntityNames, tenantFilter, TenantSubscriber } from './tenant.ts';
import { SandboxQuotaSubscriber } from './sandbox-quota.ts';
import { statementCounter, type StatementCounter } from './statements.ts';
import { useFastLiterals } from './literals.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { PgliteThread } from './pglite-thread.ts';
import { tracingEnabled } from '../tracing/switch.ts';

export type Entity = EntityClass<AnyEntity> | EntitySchema;

export interface OrmOptions {
  /**
   * The owner's name: the PostgreSQL schema (in the database of its <NAME>_DATABASE_URL, else DATABASE_URL),
   * and the PGlite folder under DATA_DIR.
   */
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

/**
 * One PGlite cluster per configuration (i.e. per stack) holds every owner's schema, as one
 * PostgreSQL database does: each PGlite instance costs seconds of CPU to create (initdb on a new
 * folder) and hundreds of MiB of memory. It runs on a thread of its own (pglite-thread.ts). A
 * DATA_DIR from before keeps its folder per owner (`pglite/<name>`), so its data stays where it is,
 * in an instance MikroORM creates in-process. Closed when its last owner closes.
 */
const clusters = new WeakMap<Config, { pglite: Promise<PgliteThread>; owners: number }>();

/** Opens the cluster on its own thread (pglite-thread.ts). */
async function openCluster(dataDir: string, sharedBuffersMb: number) {
  const thread = await PgliteThread.open({ dataDir, sharedBuffersMb });
  return tracingEnabled(process.env) ? (await import('../tracing/pglite.ts')).traceQueries(thread) : thread;
}

function sharedCluster(config: Config) {
  let cluster = clusters.get(config);
  if (!cluster) {
    const dataDir = config.PGLITE_IN_MEMORY ? 'memory://' : join(config.dataDir, 'pglite', 'cluster');
    cluster = { pglite: openCluster(dataDir, config.PGLITE_SHARED_BUFFERS_MB), owners: 0 };
    clusters.set(config, cluster);
  }
  cluster.owners += 1;
  const owned = cluster;
  let released = false;
  return {
    pglite: owned.pglite,
    /** Idempotent: a Database closed twice gives up its share once. */
    async release() {
      if (released) return;
      released = true;
      owned.owners -= 1;
      if (owned.owners > 0) return;
      clusters.delete(config);
      await (await owned.pglite).close();
    },
  };
}

/** A DATA_DIR written before the shared cluster keeps a PGlite folder per owner. */
const ownFolder = (config: Config, name: string) => join(config.dataDir, 'pglite', name);
const hasOwnFolder = (config: Config, name: string) => !config.PGLITE_IN_MEMORY && existsSync(join(ownFolder(config, name), 'PG_VERSION'));

function driverOptions(config: Config, name: string, cluster?: ReturnType<typeof sharedCluster>): Partial<Options> {
  const url = databaseUrl(config, name);
  if (url) {
    return {
      driver: PostgreSqlDriver, clientUrl: url, schema: name, pool: { min: 0, max: config.DB_POOL_MAX },
      // Bounded waits: an unreachable database fails a request in seconds instead of hanging it.
      // Kysely is pinned to 0.29.9 (package.json `overrides`; MikroORM 7.2.1 pins 0.29.6): before it, a
      // connection that died inside a transaction was never given back to this pool, as the failed
      // rollback threw before the release (kysely-org/kysely#1990), so each blip used up a slot and
      // closing hung. test/platform/pool-after-dead-connection.test.ts holds it.
      driverOptions: { connectionTimeoutMillis: config.DB_CONNECT_TIMEOUT_MS, query_timeout: config.DB_QUERY_TIMEOUT_MS },
    };
  }
  // MikroORM's driver takes the thread for the PGlite it stands for (kysely's dialect uses query, transaction and close).
  if (cluster) return { driver: PgliteDriver, dbName: 'postgres', schema: name, driverOptions: { pglite: () => cluster.pglite as unknown as Promise<PGlite> } };
  return { driver: PgliteDriver, dbName: 'postgres', schema: name, driverOptions: { dataDir: ownFolder(config, name), extensions: { btree_gist } } };
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
 * start at once and share database-wide objects such as extensions, so migrations take an advisory
 * lock in the owner's database, held on a connection of its own, one owner at a time.
 */
async function migrate(orm: MikroORM, config: Config, name: string, path: string) {
  if (await migrationsApplied(orm, name, path)) return;
  const run = async () => {
    await orm.em.getConnection().execute(`create schema if not exists "${name}"`);
    await orm.migrator.up();
  };
  const url = databaseUrl(config, name);
  if (!url) return run();
  const lock = new pg.Client({ connectionString: url, connectionTimeoutMillis: config.DB_CONNECT_TIMEOUT_MS });
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

/**
 * True when every committed migration file of the owner is recorded as executed, as on every
 * restart: one query instead of the migrator's table check, file discovery and imports. Anything
 * else (a new file, no history table yet) runs the migrator.
 */
async function migrationsApplied(orm: MikroORM, name: string, path: string) {
  const files = (await readdir(path)).filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts')).map((file) => file.slice(0, -'.ts'.length));
  const executed = await orm.em.getConnection().execute<{ name: string }[]>(`select name from "${name}".mikro_orm_migrations`)
    .then((rows: { name: string }[]) => new Set(rows.map((row) => row.name)), () => undefined);
  return !!executed && files.every((file) => executed.has(file));
}

/** One ORM per owner (subgraph or gateway), created at start, migrated, and passed in. */
export async function openDatabase(config: Config, options: OrmOptions): Promise<Database> {
  const embedded = !config.DATABASE_URL && !config.PGLITE_IN_MEMORY;
  // One process owns an embedded data folder: a second one is refused before it writes anything.
  const release = embedded ? await lockDataDir(config.dataDir) : async () => undefined;
  try {
    if (embedded) await mkdir(join(config.dataDir, 'pglite'), { recursive: true });
    return await initDatabase(config, options, release);
  } catch (error) {
    await release();
    throw error;
  }
}

async function initDatabase(config: Config, options: OrmOptions, release: () => Promise<void>): Promise<Database> {
  const statements = statementCounter();
  const cluster = config.DATABASE_URL || hasOwnFolder(config, options.name) ? undefined : sharedCluster(config);
  const orm = await MikroORM.init({
    ...driverOptions(config, options.name, cluster),
    entities: options.entities,
    extensions: [Migrator],
    migrations: migrationOptions(options.name, options.migrationsPath),
    subscribers: [new TenantSubscriber(), new SandboxQuotaSubscriber(config.SANDBOX_MAX_RECORDS)],
    allowGlobalContext: false,
    forceUtcTimezone: true,
    loggerFactory: statements.loggerFactory,
    // MikroORM's own lines (migrations applied...) are not written: the services log what matters.
    logger: () => undefined,
    ignoreUndefinedInQuery: true,
    discovery: { warnWhenNoEntities: false },
  });
  useFastLiterals(orm.em.getPlatform());
  const names = tenantEntityNames(orm.getMetadata());
  if (names.length) orm.em.addFilter(tenantFilter(names));
  try {
    await migrate(orm, config, options.name, options.migrationsPath);
  } catch (error) {
    await orm.close(true);
    await cluster?.release();
    throw error;
  }
  return {
    orm, statements,
    close: async () => {
      try { await orm.close(true); } finally { await cluster?.release(); await release(); }
    },
  };
}
