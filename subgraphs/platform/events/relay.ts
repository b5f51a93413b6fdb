import type { FastifyBaseLogger as Logger } from 'fastify';
import type { EventType } from '../webhooks/events.ts';
import { onEventsCommitted } from '../webhooks/outbox.ts';
import type { Database } from '../db/orm.ts';
import { holdsRow, inTransaction, runner, type Row, type Run } from '../db/run.ts';
import { inBackground } from '../db/statements.ts';
import type { CommittedEvent, EventBus } from './bus.ts';

/** Outbox rows read, published and deleted per round. */
const BATCH = 100;
/** How soon a relay waiting on a gap in its outbox looks again. */
const GAP_RETRY_MS = 50;
/**
 * The longest a gap holds an area's events back. The transactions that were running when it was seen
 * are those of the whole PostgreSQL server, a long one anywhere (a data load, a report) among them: past
 * this, an event of a transaction still holding its row uncommitted goes late, out of `seq` order.
 */
export const GAP_MAX_WAIT_MS = 1_000;

export interface RelayOptions {
  /** The area: the schema of its outbox, `<name>.webhook_outbox`. */
  name: string;
  /** The area's own database: its outbox and its advisory lock are there, nowhere else. */
  db: Database;
  bus: EventBus;
  log: Logger;
  pollMs: number;
  /**
   * PostgreSQL: each round holds the area's advisory lock in a transaction, so one relay per area runs
   * at a time over every process. PGlite (one process owns it): no lock and no transaction, which would
   * hold its one connection while the bus's in-process consumers write through it.
   */
  shared: boolean;
}

export interface Relay { stop(): Promise<void> }

/** A PostgreSQL advisory-lock key for a label: one job held by one process at a time over the deployment. */
export function advisoryLockKey(label: string): number {
  let hash = 0x811c9dc5;
  for (const ch of label) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return hash & 0x7fffffff;
}

/** The advisory-lock key of an area's relay; the same as the webhook relay's before it, so the two never ran at once. */
export const relayLockKey = (name: string) => advisoryLockKey(`webhook-relay:${name}`);

const eventOf = (name: string, row: Row): CommittedEvent => ({
  eventId: String(row.event_id), source: name, seq: Number(row.seq), orgId: String(row.org_id), type: row.type as EventType,
  resourceKey: String(row.resource_key), resourcePath: String(row.resource_path),
  resource: (typeof row.resource === 'string' ? JSON.parse(row.resource) : row.resource) as Record<string, unknown>,
  occurredAt: new Date(String(row.occurred_at)).toISOString(),
  ...(row.sandbox === true ? { sandbox: true } : {}),
});

/**
 * Where an area's relay stands in its outbox: the next `seq` it expects, and the gap it is waiting on.
 * Sequence values are taken at insert and committed in any order, so a row may become visible after
 * rows of higher `seq`: the relay publishes up to the first gap, and passes a gap only once it is
 * settled, every transaction running when it was first seen having ended (a rollback, or an ended
 * process, leaves a gap for ever), or after GAP_MAX_WAIT_MS. Settled is judged on the transactions
 * running before the batch was read, so that the batch holds whatever they committed: judged after,
 * a commit between the two went unseen and its row came after the rows above it. A row that still
 * shows up below `expected` (committed after its gap was passed, or after another process's relay
 * took the lock) is published as it comes: late, never lost.
 */
export interface RelayPosition {
  expected?: number;
  gap?: { seq: number; running: Set<string>; since: number };
}

/**
 * The transactions of this database other than this session's, as `pid:start`: those that may commit
 * an outbox row below a gap (one that took its `seq` may not hold a transaction id yet). Another
 * database's transactions (other tests, other applications on the server) never do, so they never
 * hold a gap.
 */
async function runningHere(run: Run): Promise<Set<string>> {
  const rows = await run(`select pid::text || ':' || xact_start::text as id from pg_stat_activity
    where datname = current_database() and backend_type = 'client backend' and xact_start is not null and pid <> pg_backend_pid()`);
  return new Set(rows.map((row) => String(row.id)));
}

/**
 * The rows of a batch that may go now, in order (see RelayPosition), moving `position` on; `before`:
 * what ran before it was read, without which the batch stops at its first gap.
 */
function publishable(rows: Row[], position: RelayPosition, before: Set<string> | undefined): Row[] {
  const taken: Row[] = [];
  for (const row of rows) {
    const seq = Number(row.seq);
    const { expected } = position;
    // A relay that has published nothing yet (its start, or another process's relay had the lock) knows
    // no position: a gap below its first row, `seq` 0, which every start passes once settled.
    if (expected === undefined || seq > expected) {
      if (!before) break;
      const missing = expected ?? 0;
      if (position.gap?.seq !== missing) position.gap = { seq: missing, running: before, since: Date.now() };
      const settled = ![...position.gap.running].some((id) => before.has(id));
      if (!settled && Date.now() - position.gap.since < GAP_MAX_WAIT_MS) break;
      position.gap = undefined;
    }
    taken.push(row);
    if (expected === undefined || seq >= expected) position.expected = seq + 1;
  }
  // The row a gap waited on came: nothing is held any more (a gap kept would have the relay read
  // every GAP_RETRY_MS, in a transaction, until another gap replaced it).
  if (position.gap && position.expected !== undefined && position.expected > position.gap.seq) position.gap = undefined;
  return taken;
}

/**
 * Publishes a batch of the outbox in `seq` order, each after the previous one's acknowledgement, then
 * deletes the rows acknowledged, by `seq` (also when a later publish failed, whose error it then throws).
 * A relay that dies between a publish and the delete publishes those rows again: consumers are idempotent by id.
 */
async function publishBatch(name: string, run: Run, bus: EventBus, position: RelayPosition): Promise<number> {
  const outbox = `"${name}"."webhook_outbox"`;
  const read = () => run(`select seq, event_id, org_id, type, resource_key, resource_path, resource, sandbox, to_json(occurred_at) #>> '{}' as occurred_at
    from ${outbox} order by seq limit ${BATCH}`);
  // A gap waited on is judged on what ran before this read; one first seen, on a second read.
  let before = position.gap ? await runningHere(run) : undefined;
  let rows = await read();
  if (!before && publishable(rows, { expected: position.expected }, undefined).length < rows.length) {
    before = await runningHere(run);
    rows = await read();
  }
  const published: number[] = [];
  let failure: unknown;
  for (const row of publishable(rows, position, before)) {
    try {
      await bus.publish(eventOf(name, row));
      published.push(Number(row.seq));
    } catch (error) {
      failure = error;
      break;
    }
  }
  if (published.length) await run(`delete from ${outbox} where seq in (${published.map(() => '?').join(', ')})`, published);
  if (failure) throw failure;
  return published.length === rows.length ? rows.length : 0;
}

/**
 * Whether the area's outbox holds a row: one statement, where a round on PostgreSQL is a transaction
 * of four (begin, the lock, the batch, commit). A relay polls every area every `pollMs` in every
 * process, mostly to find nothing.
 */
const waiting = ({ name, db }: RelayOptions) => holdsRow(runner(db), `"${name}"."webhook_outbox"`);

/** One round: a batch, under the area's lock on PostgreSQL (another process's relay holding it: nothing to do). */
async function round({ name, db, bus, shared }: RelayOptions, position: RelayPosition): Promise<number> {
  if (!shared) return publishBatch(name, runner(db), bus, position);
  let failure: unknown;
  const published = await inTransaction(db, async (run) => {
    const [lock] = await run('select pg_try_advisory_xact_lock(?) as ok', [relayLockKey(name)]);
    if (!lock?.ok) return 0;
    // The deletes of what was acknowledged commit even when a publish failed.
    return publishBatch(name, run, bus, position).catch((error: unknown) => { failure = error; return 0; });
  });
  if (failure) throw failure;
  return published;
}

/**
 * The relay of one area in this process: publishes its committed outbox rows on the bus, in outbox
 * order, at once when this process commits events of the area and every `pollMs` otherwise. While the
 * bus is unreachable the events wait in the outbox (logged once), and go when it is back.
 */
export function startRelay(options: RelayOptions): Relay {
  const { name, log, pollMs } = options;
  let stopped = false;
  let running = false;
  let again = false;
  let failing = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const position: RelayPosition = {};

  /** `polled`: on the timer, with no commit of this process's to publish (and no gap held). */
  const tick = async (polled: boolean) => {
    try {
      if (polled && options.shared && !await inBackground(() => waiting(options))) return;
      while (!stopped && await inBackground(() => round(options, position)) === BATCH);
      if (failing) log.info({ source: name }, 'events: relay publishing again');
      failing = false;
    } catch (error) {
      if (!failing && !stopped) log.warn({ err: error, source: name }, 'events: relay could not publish; the events wait in the outbox');
      failing = true;
    }
  };
  const loop = (polled = false) => {
    if (stopped) return;
    clearTimeout(timer);
    running = true;
    current = tick(polled).finally(() => {
      running = false;
      if (stopped) return;
      if (again || position.gap) timer = setTimeout(loop, again ? 0 : GAP_RETRY_MS);
      else timer = setTimeout(loop, pollMs, true);
      again = false;
    });
  };
  const unsubscribe = onEventsCommitted(({ source }) => {
    if (source !== name) return;
    if (running) again = true;
    else loop();
  });
  timer = setTimeout(loop, 0);
  return {
    async stop() {
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
      await current;
    },
  };
}
