/**
 * The embedded cluster's buffer cache (shared_buffers), resident in its WebAssembly memory: the
 * default keeps an idle `npm start` small, PGLITE_SHARED_BUFFERS_MB chooses another size.
 * PGlite only: PostgreSQL's own settings are its administrator's.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { openDatabase } from '../../subgraphs/platform/db/orm.ts';
import { GATEWAY_ENTITIES, GATEWAY_MIGRATIONS } from '../../gateway/stack.ts';

let folder: string;
beforeAll(async () => { folder = await mkdtemp(join(tmpdir(), 'frg-pglite-memory-')); });
afterAll(async () => { await rm(folder, { recursive: true, force: true }); });

async function sharedBuffers(env: Record<string, string>) {
  const config = loadConfig({ DATA_DIR: folder, PGLITE_IN_MEMORY: 'true', ...env });
  const db = await openDatabase(config, { name: 'platform', entities: GATEWAY_ENTITIES, migrationsPath: GATEWAY_MIGRATIONS });
  try {
    const [row] = await db.orm.em.getConnection().execute<{ shared_buffers: string }[]>('show shared_buffers');
    return row.shared_buffers;
  } finally {
    await db.close();
  }
}

describe.skipIf(process.env.DATABASE_URL)('embedded cluster memory', () => {
  it('runs with a 48 MB buffer cache by default (PostgreSQL\'s 128 MB would be resident at once)', async () => {
    expect(await sharedBuffers({})).toBe('48MB');
  }, 60_000);

  it('takes the buffer cache size from PGLITE_SHARED_BUFFERS_MB', async () => {
    expect(await sharedBuffers({ PGLITE_SHARED_BUFFERS_MB: '24' })).toBe('24MB');
  }, 60_000);

  it('refuses a size that is no whole number of MB', () => {
    expect(() => loadConfig({ PGLITE_SHARED_BUFFERS_MB: '0.5' })).toThrow(/PGLITE_SHARED_BUFFERS_MB/);
  });
});
