/**
 * Migrations at start: a restart whose migrations are all recorded skips the migrator, and a
 * migration file added since is still applied on the next start (PGlite on a folder, or a
 * PostgreSQL database of its own with DATABASE_URL).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../subgraphs/platform/config.ts';
import { openDatabase } from '../../subgraphs/platform/db/orm.ts';
import { testDatabase } from '../support/database.ts';

const OWNER = 'migration_probe';
// Written outside the project, so the library is imported by its resolved URL.
const migration = (className: string, sql: string) => `import { Migration } from '${import.meta.resolve('@mikro-orm/migrations')}';

export class ${className} extends Migration {
  override name = '${className}';

  override up(): void | Promise<void> {
    this.addSql(\`${sql}\`);
  }
}
`;

let folder: string;
let config: Config;
let drop: () => Promise<void>;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'frg-migrations-'));
  const database = await testDatabase();
  drop = database.drop;
  config = loadConfig({ ...process.env, ...database.env, DATA_DIR: join(folder, 'data'), PGLITE_IN_MEMORY: 'false' });
});
afterAll(async () => {
  await drop();
  await rm(folder, { recursive: true, force: true });
});

const tables = async (db: Awaited<ReturnType<typeof openDatabase>>) =>
  (await db.orm.em.getConnection().execute<{ table_name: string }[]>(`select table_name from information_schema.tables where table_schema = '${OWNER}' order by table_name`)).map((r: { table_name: string }) => r.table_name);

describe('migrations at start', () => {
  it('applies the files, changes nothing on a restart, and applies a file added since', async () => {
    const path = join(folder, 'migrations');
    await mkdir(path);
    await writeFile(join(path, 'Migration20990101000000.ts'), migration('Migration20990101000000', `create table "${OWNER}"."first" ("id" int primary key);`));
    const options = { name: OWNER, entities: [], migrationsPath: path };

    let db = await openDatabase(config, options);
    expect(await tables(db)).toEqual(['first', 'mikro_orm_migrations']);
    await db.close();

    db = await openDatabase(config, options);
    expect(await tables(db)).toEqual(['first', 'mikro_orm_migrations']);
    await db.close();

    await writeFile(join(path, 'Migration20990102000000.ts'), migration('Migration20990102000000', `create table "${OWNER}"."second" ("id" int primary key);`));
    db = await openDatabase(config, options);
    expect(await tables(db)).toEqual(['first', 'mikro_orm_migrations', 'second']);
    const executed = await db.orm.em.getConnection().execute<{ name: string }[]>(`select name from "${OWNER}".mikro_orm_migrations order by name`);
    expect(executed.map((r: { name: string }) => r.name)).toEqual(['Migration20990101000000', 'Migration20990102000000']);
    await db.close();
  }, 120_000);
});
