import { createHash } from 'node:crypto';
import type { EntityManager, Platform } from '@mikro-orm/core';
import { PgliteDriver } from '@mikro-orm/pglite';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import type { AbstractSqlConnection } from '@mikro-orm/sql';
import type { Statements } from './pglite-thread.ts';

/**
 * A fixed read (a DataLoader's lookup): PostgreSQL text with `$1..$n` placeholders, whose values are
 * strings, finite numbers, null, or arrays of strings (passed as `text[]`, e.g. `col = any($2)`).
 *
 * Outside a transaction the statement is prepared once per database session and then only executed
 * with its values: planning a statement costs about as much as running it.
 * - On PostgreSQL it is a named statement of `pg` (prepared on each pooled connection the first time
 *   it runs there; the values travel apart from the text, as parameters).
 * - On PGlite (a one-row lookup: ~190 of ~350 us planning; a page of bookings with their vehicles:
 *   ~380 of ~840), it is PREPAREd once per session and EXECUTEd with its values inlined as literals,
 *   sent as one simple query: one message to the cluster's thread (pglite-thread.ts) and two protocol
 *   round trips into the WebAssembly module there; the extended protocol takes six, ~60 us more.
 * Inside a transaction the text runs on the transaction's connection with the values inlined as
 * literals (a failed EXECUTE would abort the transaction). Literals are escaped by MikroORM's platform,
 * as all of its queries are. Every way, MikroORM's connection times, logs and counts it as one statement.
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

/** The value, checked: what a read statement takes (see ReadStatement). */
function checked(value: unknown): Value {
  if (Array.isArray(value)) {
    if (!value.every((v) => typeof v === 'string')) throw new TypeError('read statement: arrays hold strings only');
    return value as string[];
  }
  if (value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) return value;
  throw new TypeError(`read statement: unsupported value of type ${typeof value}`);
}

function literal(platform: Platform, value: Value): string {
  if (Array.isArray(value)) return `array[${value.map((v) => platform.quoteValue(v)).join(', ')}]::text[]`;
  return value === null ? 'null' : String(platform.quoteValue(value));
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

/** MikroORM's wrapper that times, logs and counts a statement (protected on its Connection). */
type LoggingConnection = { executeQuery<T>(query: string, run: () => Promise<T>, context: { query: string; params: unknown[] }): Promise<T> };
type Rows = Record<string, unknown>[];

/** Each connection's own client (its PGlite instance, its `pg` pool), asked of it once. */
const nativeClients = new WeakMap<object, Promise<unknown>>();

/** Runs `run` on the connection's own client, timed, logged and counted by MikroORM as its own statements are. */
async function onNativeClient<Client>(connection: AbstractSqlConnection, query: string, params: unknown[], run: (client: Client) => Promise<Rows>): Promise<Rows> {
  let native = nativeClients.get(connection);
  if (!native) nativeClients.set(connection, native = connection.getNativeClient());
  const client = await native as Client;
  return (connection as unknown as LoggingConnection).executeQuery(query, () => run(client), { query, params });
}

/** `execute` as one simple query on the PGlite instance. Like MikroORM's driver, PGlite waits for an open transaction on the instance to end. */
const executeOnPglite = (connection: AbstractSqlConnection, execute: string) =>
  onNativeClient<Statements>(connection, execute, [], async (pglite) => (await pglite.exec(execute))[0].rows as Rows);

/** `pg`'s pool: `query` with a named statement prepares it on the pooled connection it runs on, once. */
interface PgPool { query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Rows }> }

const executeOnPool = (connection: AbstractSqlConnection, { name, text }: ReadStatement, values: Value[]) =>
  onNativeClient<PgPool>(connection, text, values, async (pool) => (await pool.query({ name, text, values })).rows);

/** Runs a read statement (see ReadStatement) and returns its rows. */
export async function selectRows(em: EntityManager, statement: ReadStatement, given: readonly Value[]): Promise<Rows> {
  const values = given.map(checked);
  const connection = em.getConnection('read') as unknown as AbstractSqlConnection;
  const transaction = em.getTransactionContext();
  const driver = em.getDriver();
  if (!transaction && driver instanceof PostgreSqlDriver) {
    try {
      return await executeOnPool(connection, statement, values);
    } catch (error) {
      // Deallocated behind pg's back (DEALLOCATE, a pooler in between): run it with its values inlined.
      if (sqlState(error) !== SQLSTATE_UNDEFINED_STATEMENT) throw error;
    }
  }
  const platform = em.getPlatform();
  const args = values.map((value) => literal(platform, value));
  if (transaction || !(driver instanceof PgliteDriver)) {
    return connection.execute(inline(statement, args), [], 'all', transaction) as Promise<Rows>;
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
