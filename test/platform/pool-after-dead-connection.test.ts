/**
 * A PostgreSQL connection that dies inside a transaction goes back to the pool (discarded), so
 * database blips do not use up DB_POOL_MAX and closing the ORM still finishes. Kysely before
 * 0.29.9 left it checked out when the rollback failed (kysely-org/kysely#1990). PostgreSQL only:
 * PGlite has no backends to terminate.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { SqlEntityManager } from '@mikro-orm/sql';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { openDatabase, type Database } from '../../subgraphs/platform/db/orm.ts';
import { testDatabase } from '../support/database.ts';

const POOL_MAX = 2;
const sqlEm = (db: Database) => db.orm.em.fork() as SqlEntityManager;
/** Resolves to 'timeout' after `ms` unless `work` settles first. */
const within = <T>(work: Promise<T>, ms: number) =>
  Promise.race([work, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms).unref())]);

describe.skipIf(!process.env.DATABASE_URL)('pool after a connection dies inside a transaction', () => {
  let folder: string;
  let db: Database | undefined;
  let url: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'frg-dead-conn-'));
    const database = await testDatabase();
    drop = database.drop;
    url = database.env.DATABASE_URL!;
    // Short connect timeout: with the pool used up, acquiring a connection fails in a second, not five.
    const config = loadConfig({ ...process.env, ...database.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', DATA_DIR: join(folder, 'data'), DB_POOL_MAX: String(POOL_MAX), DB_CONNECT_TIMEOUT_MS: '1000' });
    db = await openDatabase(config, { name: 'dead_conn_probe', entities: [], migrationsPath: folder });
  });
  afterAll(async () => {
    // A hung close (the bug) must not hold the suite: the database is dropped with (force) anyway.
    if (db) await within(db.close(), 1_000);
    await drop?.();
    await rm(folder, { recursive: true, force: true });
  });

  it('gives the connection back, so queries still run and closing finishes', async () => {
    const killer = new pg.Client({ connectionString: url });
    await killer.connect();
    try {
      // Killed before a statement of the transaction, then before its commit: both fail, both give the connection back.
      for (const lastStatement of [true, false]) {
        for (let i = 0; i < POOL_MAX + 1; i++) {
          const failed = await sqlEm(db!).transactional(async (trx) => {
            const [{ pid }] = await trx.execute<{ pid: number }[]>('select pg_backend_pid() as pid');
            await killer.query('select pg_terminate_backend($1)', [pid]);
            if (lastStatement) await trx.execute('select 1');
          }).then(() => false, () => true);
          expect(failed).toBe(true);
        }
      }
    } finally {
      await killer.end();
    }
    const rows = await within(sqlEm(db!).execute<{ one: number }[]>('select 1 as one'), 3_000);
    expect(rows).toEqual([{ one: 1 }]);
    const closing = db!;
    db = undefined;
    expect(await within(closing.close().then(() => 'closed'), 3_000)).toBe('closed');
  });
});

/** The fix is package.json's `overrides.kysely`; once MikroORM itself asks for that version or newer, the override is to go. */
describe('kysely override', () => {
  it('is newer than the kysely MikroORM asks for', () => {
    const require = createRequire(import.meta.url);
    const { overrides } = require('../../package.json') as { overrides: Record<string, string> };
    const asked = (require('@mikro-orm/sql/package.json') as { dependencies: Record<string, string> }).dependencies.kysely!;
    const parts = (version: string) => version.replace(/^[\^~]/, '').split('.').map(Number);
    const [pinned, wanted] = [parts(overrides.kysely!), parts(asked)];
    const newer = pinned.findIndex((part, i) => part !== wanted[i]);
    expect(newer >= 0 && pinned[newer]! > wanted[newer]!, `MikroORM asks for kysely ${asked}: drop the override (${overrides.kysely})`).toBe(true);
    // kysely's `exports` leave out its package.json.
    const installed = JSON.parse(readFileSync(new URL('../../node_modules/kysely/package.json', import.meta.url), 'utf8')) as { version: string };
    expect(installed.version).toBe(overrides.kysely);
  });
});
