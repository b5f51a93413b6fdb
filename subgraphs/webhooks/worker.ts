import type { SqlEntityManager } from '@mikro-orm/sql';
import type { Config } from '../platform/config.ts';
import type { Database } from '../platform/db/orm.ts';
import type { Worker, WorkerContext } from '../platform/subgraph.ts';
import { EVENT_SOURCES } from '../platform/webhooks/events.ts';
import { sendWebhook } from '../platform/webhooks/send.ts';
import { onEventsCommitted } from '../platform/webhooks/outbox.ts';
import type { AttemptLogEntry } from './entities.ts';

type Row = Record<string, unknown>;
type Run = (sql: string, params?: unknown[]) => Promise<Row[]>;

const DELIVERIES = '"webhooks"."webhook_deliveries"';
const SUBSCRIPTIONS = '"webhooks"."webhook_subscriptions"';
/** Events relayed, and deliveries claimed, per round. */
const BATCH = 50;
/** Attempts kept in a delivery's log (a replayed delivery adds to it). */
const LOG_KEPT = 30;
/** Finished deliveries stay readable in the log this long, then go (checked every few minutes). */
export const LOG_RETENTION_DAYS = 30;
const PRUNE_EVERY_MS = 10 * 60_000;

const runner = (db: Database): Run => (sql, params = []) => (db.orm.em.getConnection() as ReturnType<SqlEntityManager['getConnection']>).execute(sql, params, 'all');

async function transaction<T>(db: Database, fn: (run: Run) => Promise<T>): Promise<T> {
  return (db.orm.em.fork() as SqlEntityManager).transactional(async (tx) => {
    const connection = tx.getConnection();
    const ctx = tx.getTransactionContext();
    return fn((sql, params = []) => connection.execute(sql, params, 'all', ctx));
  });
}

/** The wait before retry n (1-based): base x 4^(n-1). */
export const retryDelayMs = (config: Pick<Config, 'WEBHOOK_RETRY_BASE_MS'>, attempt: number) => config.WEBHOOK_RETRY_BASE_MS * 4 ** (attempt - 1);

/** The schedule of a delivery that never succeeds: seconds after the event of each attempt. */
export function retrySchedule(config: Pick<Config, 'WEBHOOK_RETRY_BASE_MS' | 'WEBHOOK_MAX_ATTEMPTS'>): number[] {
  const at = [0];
  for (let n = 1; n < config.WEBHOOK_MAX_ATTEMPTS; n += 1) at.push(at[n - 1] + retryDelayMs(config, n) / 1000);
  return at;
}

/** A stable advisory-lock key per outbox, so one relay at a time moves its events (in order), whatever the number of processes. */
function lockKey(name: string): number {
  let hash = 0x811c9dc5;
  for (const ch of `webhook-relay:${name}`) hash = Math.imul(hash ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  return hash & 0x7fffffff;
}

/**
 * Moves one source's outbox into deliveries, one for each subscription of the event's organisation
 * that asked for its type. Deliveries are inserted (idempotently: one per subscription and event)
 * before the outbox rows are deleted, so a crash in between sends nothing twice and loses nothing.
 */
async function relay(source: { name: string; db: Database }, webhooks: Run, transactional: boolean): Promise<number> {
  const outbox = `"${source.name}"."webhook_outbox"`;
  if (!(await runner(source.db)(`select 1 from ${outbox} limit 1`)).length) return 0;
  const within = <T>(fn: (run: Run) => Promise<T>) => (transactional ? transaction(source.db, fn) : fn(runner(source.db)));
  return within(async (run) => {
    const [lock] = await run('select pg_try_advisory_xact_lock(?) as ok', [lockKey(source.name)]);
    if (!lock?.ok) return 0;
    const events = await run(`select seq, event_id, org_id, type, resource_key, resource_path, resource, occurred_at from ${outbox} order by seq limit ${BATCH}`);
    if (!events.length) return 0;
    const orgs = [...new Set(events.map((e) => String(e.org_id)))];
    const subscriptions = await webhooks(`select id, org_id, event_types from ${SUBSCRIPTIONS} where org_id in (${orgs.map(() => '?').join(', ')})`, orgs);
    const values: unknown[] = [];
    for (const event of events) {
      const payload = JSON.stringify({
        id: event.event_id, type: event.type, timestamp: new Date(event.occurred_at as string).toISOString(),
        data: { path: event.resource_path, resource: typeof event.resource === 'string' ? JSON.parse(event.resource) : event.resource },
      });
      for (const subscription of subscriptions) {
        const types = typeof subscription.event_types === 'string' ? JSON.parse(subscription.event_types) : subscription.event_types;
        if (subscription.org_id !== event.org_id || !(types as string[]).includes(String(event.type))) continue;
        values.push(crypto.randomUUID(), event.org_id, subscription.id, event.event_id, event.type, `${source.name}:${event.resource_key}`, Number(event.seq), payload);
      }
    }
    if (values.length) {
      const rows = Array.from({ length: values.length / 8 }, () => `(?, ?, ?, ?, ?, ?, ?, ?, 'PENDING', 0, now(), '[]'::jsonb, now())`);
      await webhooks(`insert into ${DELIVERIES} (id, org_id, subscription_id, event_id, event_type, resource_key, source_seq, payload, status, attempts, next_attempt_at, attempt_log, created_at)
        values ${rows.join(', ')} on conflict (subscription_id, event_id) do nothing`, values);
    }
    await run(`delete from ${outbox} where seq <= ?`, [Number(events[events.length - 1].seq)]);
    return events.length;
  });
}

interface Claimed { id: string; subscription_id: string; payload: string; attempts: number; attempt_log: AttemptLogEntry[] | string }

/**
 * Claims due deliveries with a lease (a crashed worker's claims come back when it runs out), never
 * one whose resource has an earlier delivery still pending, sends them and records the outcome.
 */
async function deliverDue(run: Run, config: Config): Promise<number> {
  const leaseMs = config.WEBHOOK_TIMEOUT_MS * 2 + 10_000;
  const claimed = await run(`with due as (
      select d.id from ${DELIVERIES} d
      where d.status = 'PENDING' and d.next_attempt_at <= now() and (d.locked_until is null or d.locked_until < now())
        and not exists (select 1 from ${DELIVERIES} e where e.subscription_id = d.subscription_id and e.resource_key = d.resource_key
          and e.status = 'PENDING' and e.source_seq < d.source_seq)
      order by d.next_attempt_at, d.source_seq limit ${BATCH} for update of d skip locked)
    update ${DELIVERIES} w set locked_until = now() + (? * interval '1 millisecond') from due where w.id = due.id
    returning w.id, w.subscription_id, w.payload, w.attempts, w.attempt_log`, [leaseMs]) as unknown as Claimed[];
  if (!claimed.length) return 0;
  const ids = [...new Set(claimed.map((c) => c.subscription_id))];
  const subscriptions = new Map((await run(`select id, url, secret from ${SUBSCRIPTIONS} where id in (${ids.map(() => '?').join(', ')})`, ids))
    .map((s) => [String(s.id), s as { url: string; secret: string }]));
  await Promise.all(claimed.map(async (delivery) => {
    const subscription = subscriptions.get(delivery.subscription_id);
    if (!subscription) return;
    const result = await sendWebhook(subscription.url, subscription.secret, delivery.id, delivery.payload, {
      timeoutMs: config.WEBHOOK_TIMEOUT_MS, maxResponseBytes: config.WEBHOOK_MAX_RESPONSE_BYTES,
    });
    const attempts = delivery.attempts + 1;
    const previous = typeof delivery.attempt_log === 'string' ? JSON.parse(delivery.attempt_log) as AttemptLogEntry[] : delivery.attempt_log;
    const log = [...previous, { at: new Date().toISOString(), status: result.status, error: result.error, durationMs: result.durationMs }].slice(-LOG_KEPT);
    const status = result.ok ? 'SUCCEEDED' : attempts >= config.WEBHOOK_MAX_ATTEMPTS ? 'FAILED' : 'PENDING';
    await run(`update ${DELIVERIES} set status = ?, attempts = ?, locked_until = null, last_attempt_at = now(), last_response_status = ?, last_error = ?,
        delivered_at = ${result.ok ? 'now()' : 'null'}, next_attempt_at = now() + (? * interval '1 millisecond'), attempt_log = ?::jsonb where id = ?`,
    [status, attempts, result.status, result.error, status === 'PENDING' ? retryDelayMs(config, attempts) : 0, JSON.stringify(log), delivery.id]);
  }));
  return claimed.length;
}

/**
 * Polls the outboxes of the event sources and the due deliveries. Each outbox is read through the
 * database of its subgraph when that subgraph runs in this process, and otherwise (compose) through
 * this subgraph's own connection, since every schema lives in the one PostgreSQL database.
 */
export function startDeliveryWorker({ db, config, log, peers }: WorkerContext): Worker {
  if (!config.WEBHOOK_WORKER) return { stop: async () => undefined };
  const sources = EVENT_SOURCES.flatMap((name) => {
    const source = peers[name] ?? (config.DATABASE_URL ? db : undefined);
    if (!source) log.warn({ source: name }, 'webhook events of this subgraph cannot be relayed: it runs elsewhere on PGlite');
    return source ? [{ name, db: source }] : [];
  });
  const webhooks = runner(db);
  // On PGlite one process owns the data (the folder lock) and one connection serves every schema:
  // a transaction on the source would hold it while the statements on the webhooks schema wait for
  // it. Without one, a crash between the insert and the delete re-inserts nothing (on conflict).
  const transactional = !!config.DATABASE_URL;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const reported = new Set<string>();
  let pruned = 0;

  const tick = async () => {
    for (const source of sources) {
      try {
        while (!stopped && await relay(source, webhooks, transactional) === BATCH);
        reported.delete(source.name);
      } catch (error) {
        // A source that is down (or not migrated yet) keeps its events; say so once until it recovers.
        if (!reported.has(source.name)) log.warn({ err: error, source: source.name }, 'webhook relay failed; retrying');
        reported.add(source.name);
      }
    }
    try {
      while (!stopped && await deliverDue(webhooks, config) === BATCH);
      if (Date.now() - pruned > PRUNE_EVERY_MS) {
        pruned = Date.now();
        await webhooks(`delete from ${DELIVERIES} where status <> 'PENDING' and created_at < now() - interval '${LOG_RETENTION_DAYS} days'`);
      }
    } catch (error) {
      log.warn({ err: error }, 'webhook delivery round failed; retrying');
    }
  };
  let running = false;
  let again = false;
  const loop = () => {
    if (stopped) return;
    clearTimeout(timer);
    running = true;
    current = tick().finally(() => {
      running = false;
      if (stopped) return;
      timer = setTimeout(loop, again ? 0 : config.WEBHOOK_POLL_INTERVAL_MS);
      again = false;
    });
  };
  // Events committed in this process are relayed at once; others wait for the next poll.
  const unsubscribe = onEventsCommitted(() => {
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
