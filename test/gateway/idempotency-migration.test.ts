/**
 * Keys stored before replays were authorised keep working after the migration that records scopes:
 * each gets its client's scopes (every scope when the client is gone), so its answer is replayed to
 * a token that may run its request and refused to a narrower one. PGlite on a folder, or a
 * PostgreSQL database of its own with DATABASE_URL.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IdempotencyStore } from '../../gateway/idempotency/store.ts';
import { GATEWAY_ENTITIES, GATEWAY_MIGRATIONS } from '../../gateway/stack.ts';
import { loadConfig, type Config } from '../../subgraphs/platform/config.ts';
import { ReportVault } from '../../subgraphs/platform/crypto/vault.ts';
import { openDatabase } from '../../subgraphs/platform/db/orm.ts';
import { testDatabase } from '../support/database.ts';

const SCOPES_MIGRATION = 'Migration20261127092257.ts';

let folder: string;
let config: Config;
let drop: () => Promise<void>;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'frg-idempotency-migration-'));
  const database = await testDatabase();
  drop = database.drop;
  config = loadConfig({ ...process.env, ...database.env, DATA_DIR: join(folder, 'data'), PGLITE_IN_MEMORY: 'false' });
});
afterAll(async () => {
  await drop();
  await rm(folder, { recursive: true, force: true });
});

/** The gateway's migrations up to `last` (by file name), written outside the project: the library imported by its URL. */
async function migrationsUpTo(path: string, last: string) {
  await mkdir(path, { recursive: true });
  for (const file of (await readdir(GATEWAY_MIGRATIONS)).filter((f) => f <= last)) {
    const text = await readFile(join(GATEWAY_MIGRATIONS, file), 'utf8');
    const library = `'${import.meta.resolve('@mikro-orm/migrations')}'`;
    await writeFile(join(path, file), text.replace("'@mikro-orm/migrations'", library));
  }
}

it('rows kept before the migration get their client\'s scopes and replay only to a token holding them', async () => {
  const path = join(folder, 'migrations');
  await migrationsUpTo(path, 'Migration20261123213000.ts');
  const vault = new ReportVault(Buffer.alloc(32, 7));
  const body = '{"userId":"kept-before"}';
  const rows = [
    { id: crypto.randomUUID(), client: 'legacy-client', key: 'kept-1' },
    { id: crypto.randomUUID(), client: 'client-gone', key: 'kept-2' },
  ];
  let db = await openDatabase(config, { name: 'platform', entities: [], migrationsPath: path });
  const sql = (text: string) => db.orm.em.getConnection().execute(text);
  await sql(`insert into platform.clients (id, client_id, secret_hash, organisation, scopes, created_at, secret_rotated_at)
    values ('${crypto.randomUUID()}', 'legacy-client', 'x', 'org-legacy', '{b2b,roadside}', now(), now())`);
  for (const row of rows) {
    const ciphertext = vault.encrypt(Buffer.from(body).toString('base64'), row.id).toString('hex');
    await sql(`insert into platform.idempotency_keys
      (id, client_id, organisation, key, fingerprint, state, locked_at, status, headers, body_ciphertext, key_id, created_at, expires_at)
      values ('${row.id}', '${row.client}', 'org-legacy', '${row.key}', 'f', 'done', now(), 201, '{"content-type":"application/json"}',
        decode('${ciphertext}', 'hex'), '${vault.keyId}', now(), now() + interval '1 day')`);
  }
  await db.close();

  await migrationsUpTo(path, SCOPES_MIGRATION);
  db = await openDatabase(config, { name: 'platform', entities: GATEWAY_ENTITIES, migrationsPath: path });
  try {
    type Row = { key: string; scopes: string[] };
    const scopes = await db.orm.em.getConnection().execute<Row[]>('select key, scopes from platform.idempotency_keys order by key');
    expect(scopes.map((r: Row) => [r.key, [...r.scopes].sort()])).toEqual([
      ['kept-1', ['b2b', 'roadside']],
      ['kept-2', ['admin', 'b2b', 'roadside']],
    ]);

    const store = new IdempotencyStore(db.orm.em, vault);
    const claim = (client: string, key: string, tokenScopes: string[]) =>
      store.claim({ clientId: client, organisation: 'org-legacy' }, { key, fingerprint: 'f', scopes: tokenScopes });
    expect(await claim('legacy-client', 'kept-1', ['b2b'])).toEqual({ kind: 'forbidden', missing: ['roadside'] });
    expect(await claim('legacy-client', 'kept-1', ['b2b', 'roadside'])).toEqual({
      kind: 'replay', response: { status: 201, headers: { 'content-type': 'application/json' }, body: Buffer.from(body) },
    });
    expect(await claim('client-gone', 'kept-2', ['b2b', 'roadside'])).toEqual({ kind: 'forbidden', missing: ['admin'] });
    // The new state is allowed by the table's check.
    const fresh = await claim('legacy-client', 'new-key', ['b2b']);
    await store.withhold((fresh as { id: string }).id);
    expect(await claim('legacy-client', 'new-key', ['b2b'])).toEqual({ kind: 'withheld' });
  } finally {
    await db.close();
  }
}, 120_000);
