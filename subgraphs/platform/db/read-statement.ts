import { createHash } from 'node:crypto';
import type { EntityManager, Platform } from '@mikro-orm/core';
import type { PGlite } from '@electric-sql/pglite';
import { PgliteDriver, type PgliteConnection } from '@mikro-orm/pglite';
import type { AbstractSqlConnection } from '@mikro-orm/sql';

/**
 * A fixed read (a DataLoader's lookup): PostgreSQL text with `$1..$n` placeholders, whose values are
 * strings, finite numbers, null, or arrays of strings (passed as `text[]`, e.g. `col = any($2)`).
 *
 * On PGlite, where the database runs in this process, planning a statement costs as much CPU as
 * running it (a one-row lookup: ~190 of ~350 us; a page of bookings with their vehicles: ~380 of
 * ~840): the statement is prepared once per PGlite session and then EXECUTEd with its values, sent
 * to PGlite as one simple query (two protocol round trips into the WebAssembly module; the extended
 * protocol MikroORM's driver uses takes six, ~60 us more per statement). On
 * PostgreSQL, and inside a transaction (where a failed EXECUTE would abort it), the text is run
 * with the values inlined as literals, escaped by MikroORM's platform as all of its queries are.
 * Either way it goes through the EntityManager's connection: counted as one statement, in its
 * transaction if one is open.
 */
export interface ReadStatement {
  readonly text: string;
  /** The prepared statement's name, derived from the text (same text, same name, in any process). */
  readonly name: string;
  /** The text split at its placeholders: text, value index, text, ... (inlined without a regular expression per run). */
  readonly parts: readonly (string | number)[];
}

export const readStatement = (text: string): ReadStatement => ({
  text, name: `frg_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`,
  parts: text.split(/\$(\d+)/).map((part, i) => (i % 2 ? Number(part) - 1 : part)),
});

const built = new WeakMap<object, Map<string, ReadStatement>>();

/** The statement `key` of `owner` (an entity's row shape), its text built on first use only. */
export function statementOf(owner: object, key: string, text: () => string): ReadStatement {
  let byKey = built.get(owner);
  if (!byKey) built.set(owner, byKey = new Map());
  let statement = byKey.get(key);
  if (!statement) byKey.set(key, statement = readStatement(text()));
  return statement;
}

type Value = string | number | null | readonly string[];

function literal(platform: Platform, value: unknown): string {
  if (Array.isArray(value)) {
    if (!value.every((v) => typeof v === 'string')) throw new TypeError('read statement: arrays hold strings only');
    return `array[${value.map((v) => platform.quoteValue(v)).join(', ')}]::text[]`;
  }
  if (value === null) return 'null';
  if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) return String(platform.quoteValue(value));
  throw new TypeError(`read statement: unsupported value of type ${typeof value}`);
}

function inline({ parts }: ReadStatement, args: string[]): string {
  let text = parts[0] as string;
  for (let i = 1; i < parts.length; i += 2) {
    const arg = args[parts[i] as number];
    if (arg === undefined) throw new TypeError(`read statement: no value for $${(parts[i] as number) + 1}`);
    text += arg + (parts[i + 1] as string);
  }
  return text;
}

/** What each connection (one PGlite session per instance) has prepared, or is preparing. */
const preparedOn = new WeakMap<object, Map<string, Promise<void>>>();

const SQLSTATE_UNDEFINED_STATEMENT = '26000';
const SQLSTATE_DUPLICATE_STATEMENT = '42P05';
const sqlState = (error: unknown): string | undefined => {
  const e = error as { code?: unknown; cause?: { code?: unknown } };
  return typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
};

function prepare(connection: AbstractSqlConnection, statement: ReadStatement): Promise<void> {
  let prepared = preparedOn.get(connection);
  if (!prepared) preparedOn.set(connection, prepared = new Map());
  let done = prepared.get(statement.name);
  if (!done) {
    // Session set-up, not a statement of the request: run without MikroORM's query log (and count).
    // Another owner of a shared PGlite instance may have prepared the same text already.
    done = connection.executeDump(`prepare ${statement.name} as ${statement.text}`)
      .catch((error: unknown) => { if (sqlState(error) !== SQLSTATE_DUPLICATE_STATEMENT) throw error; });
    const settled = done;
    prepared.set(statement.name, settled);
    settled.catch(() => { if (prepared.get(statement.name) === settled) prepared.delete(statement.name); });
  }
  return done;
}

const instances = new WeakMap<object, Promise<PGlite>>();

/** MikroORM's wrapper that times, logs and counts a statement (protected on its Connection). */
type LoggingConnection = { executeQuery<T>(query: string, run: () => Promise<T>, context: { query: string; params: unknown[] }): Promise<T> };

/**
 * Runs `execute` on the PGlite instance itself, timed, logged and counted by MikroORM as its own
 * statements are. Like MikroORM's driver, PGlite waits for an open transaction on the instance to end.
 */
async function executeOnPglite(connection: AbstractSqlConnection, execute: string): Promise<Record<string, unknown>[]> {
  let instance = instances.get(connection);
  if (!instance) instances.set(connection, instance = (connection as unknown as PgliteConnection).getNativeClient());
  const pglite = await instance;
  return (connection as unknown as LoggingConnection).executeQuery(execute, async () => (await pglite.exec(execute))[0].rows as Record<string, unknown>[], { query: execute, params: [] });
}

/** Runs a read statement (see ReadStatement) and returns its rows. */
export async function selectRows(em: EntityManager, statement: ReadStatement, values: readonly Value[]): Promise<Record<string, unknown>[]> {
  const platform = em.getPlatform();
  const args = values.map((value) => literal(platform, value));
  const connection = em.getConnection('read') as unknown as AbstractSqlConnection;
  const transaction = em.getTransactionContext();
  if (transaction || !(em.getDriver() instanceof PgliteDriver)) {
    return connection.execute(inline(statement, args), [], 'all', transaction) as Promise<Record<string, unknown>[]>;
  }
  const execute = `execute ${statement.name}(${args.join(', ')})`;
  await prepare(connection, statement);
  try {
    return await executeOnPglite(connection, execute);
  } catch (error) {
    // A new session (the instance was reopened) has none of the old statements: prepare again, once.
    if (sqlState(error) !== SQLSTATE_UNDEFINED_STATEMENT) throw error;
    preparedOn.get(connection)?.delete(statement.name);
    await prepare(connection, statement);
    return await executeOnPglite(connection, execute);
  }
}
