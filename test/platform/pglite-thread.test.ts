/**
 * The embedded cluster on a thread of its own (subgraphs/platform/db/pglite-thread.ts): the event
 * loop runs while PostgreSQL works, and MikroORM, the read statements and the Risk Index's COPY see
 * what an in-process PGlite gave them. PGlite only.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { openDatabase, type Database } from '../../subgraphs/platform/db/orm.ts';
import { PgliteThread } from '../../subgraphs/platform/db/pglite-thread.ts';
import { GATEWAY_ENTITIES, GATEWAY_MIGRATIONS } from '../../gateway/stack.ts';

const NODE = join(import.meta.dirname, '../../node_modules/.bin/node');

describe.skipIf(process.env.DATABASE_URL)('the embedded cluster on its own thread', () => {
  let folder: string;
  let db: Database;
  const execute = <T>(sql: string) => db.orm.em.getConnection().execute<T>(sql);

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'frg-pglite-thread-'));
    db = await openDatabase(loadConfig({ DATA_DIR: folder, PGLITE_IN_MEMORY: 'true' }), { name: 'platform', entities: GATEWAY_ENTITIES, migrationsPath: GATEWAY_MIGRATIONS });
    await execute('create table platform.thread_probe (id int primary key, note text)');
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('leaves the event loop free while a statement runs (in-process, a timer waited for the statement)', async () => {
    const order: string[] = [];
    setTimeout(() => order.push('timer of 20 ms'), 20);
    await execute('select pg_sleep(0.3)');
    order.push('statement of 300 ms');
    expect(order).toEqual(['timer of 20 ms', 'statement of 300 ms']);
  });

  it('keeps a transaction to itself: a statement outside waits for its end and sees what it committed', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let inside!: () => void;
    const begun = new Promise<void>((resolve) => { inside = resolve; });
    const transaction = db.orm.em.fork().transactional(async (em) => {
      await em.getConnection().execute('insert into platform.thread_probe values (1, \'held\')', [], 'run', em.getTransactionContext());
      inside();
      await held;
    });
    await begun;
    let counted: number | undefined;
    const outside = execute<{ n: number }[]>('select count(*)::int as n from platform.thread_probe').then(([row]) => { counted = row.n; });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(counted).toBeUndefined();
    release();
    await Promise.all([transaction, outside]);
    expect(counted).toBe(1);
  });

  it('rolls back what a failed transaction wrote', async () => {
    const failing = db.orm.em.fork().transactional(async (em) => {
      await em.getConnection().execute('insert into platform.thread_probe values (2, \'lost\')', [], 'run', em.getTransactionContext());
      throw new Error('changed my mind');
    });
    await expect(failing).rejects.toThrow('changed my mind');
    expect(await execute('select id from platform.thread_probe where id = 2')).toEqual([]);
  });

  it("sends a transaction's statements with its BEGIN: the thread runs them while this loop is busy", async () => {
    const thread = await PgliteThread.open({ dataDir: 'memory://', sharedBuffersMb: 16 });
    try {
      const now = 'select (extract(epoch from clock_timestamp()) * 1000)::float8 as at';
      const ran = thread.transaction((tx) => tx.query<{ at: number }>(now));
      // This loop held, as a busy gateway's is: waiting for the BEGIN's answer, nothing would run.
      const busyUntil = Date.now() + 1_000;
      while (Date.now() < busyUntil);
      const { rows: [row] } = await ran;
      expect(row!.at).toBeLessThan(busyUntil);
    } finally {
      await thread.close();
    }
  }, 60_000);

  it('hands back PostgreSQL\'s error fields, which MikroORM maps to its exceptions', async () => {
    const error = await execute('insert into platform.thread_probe values (1, \'again\')').catch((e: Error) => e);
    expect(error).toMatchObject({ code: '23505', constraint: 'thread_probe_pkey', message: expect.stringContaining('duplicate key') });
    expect(db.orm.em.getDriver().convertException(error as Error)).toBeInstanceOf(UniqueConstraintViolationException);
  });

  it('copies rows in and out through blobs, as the prepared Risk Index data are', async () => {
    const thread = await PgliteThread.open({ dataDir: 'memory://', sharedBuffersMb: 16 });
    try {
      await thread.exec('create table copied (id int, note text)');
      await thread.transaction((tx) => tx.query('copy copied from \'/dev/blob\'', [], { blob: new Blob(['1\tone\n2\ttwo\n']) }));
      const { blob } = await thread.query('copy copied to \'/dev/blob\'');
      expect(await blob?.text()).toBe('1\tone\n2\ttwo\n');
    } finally {
      await thread.close();
    }
    await expect(thread.query('select 1')).rejects.toThrow('PGlite is closed');
  }, 60_000);

  it('does not keep a process alive once it has nothing to do', async () => {
    const script = join(folder, 'idle.mjs');
    await writeFile(script, `import { PgliteThread } from ${JSON.stringify(join(import.meta.dirname, '../../subgraphs/platform/db/pglite-thread.ts'))};
      const thread = await PgliteThread.open({ dataDir: 'memory://', sharedBuffersMb: 16 });
      console.log((await thread.query('select 40 + 2 as n')).rows[0].n);`);
    const child = spawn(NODE, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString(); });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect({ code, out: out.trim() }).toEqual({ code: 0, out: '42' });
  }, 60_000);
});
