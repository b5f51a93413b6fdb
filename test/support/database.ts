import pg from 'pg';

/**
 * With DATABASE_URL set, each test stack gets a database of its own (created here, dropped on
 * close), so test files can run in parallel; without it the stack runs on in-memory PGlite.
 * `prefix` (lower-case letters, digits, `_`) starts the database's name.
 */
export async function testDatabase(
  base = process.env.DATABASE_URL, prefix = 'test',
): Promise<{ env: Record<string, string>; drop(): Promise<void> }> {
  if (!base) return { env: { PGLITE_IN_MEMORY: 'true' }, drop: async () => undefined };
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    env: { DATABASE_URL: url.toString() },
    async drop() {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`drop database if exists "${name}" with (force)`);
      await client.end();
    },
  };
}

/** Drops every database whose name starts with `prefix` (those of stacks closed with their process). */
export async function dropTestDatabases(prefix: string, base = process.env.DATABASE_URL): Promise<void> {
  if (!base) return;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ datname: string }>(
      'select datname from pg_database where starts_with(datname, $1)', [prefix]);
    for (const { datname } of rows) await admin.query(`drop database if exists "${datname}" with (force)`);
  } finally {
    await admin.end();
  }
}
