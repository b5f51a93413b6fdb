import type { SqlEntityManager } from '@mikro-orm/sql';
import type { Database } from '../platform/db/orm.ts';
import { databaseUrl } from '../platform/config.ts';
import type { Worker, WorkerContext } from '../platform/subgraph.ts';
import { EVENT_SOURCES } from '../events.ts';
import { onEventsCommitted } from '../platform/webhooks/outbox.ts';
import { attempt, claimDue, DELIVERIES, SUBSCRIPTIONS, type Run } from './deliver.ts';

/** Events relayed, and deliveries claimed, per statement. */
const BATCH = 50;
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

/**
 * Polls the outboxes of the event sources and the due deliveries. Each outbox is read through the
 * database of its subgraph when that subgraph runs in this process, and otherwise (compose) through
 * this subgraph's own connection when both schemas live in the same PostgreSQL database.
 * Deliveries go concurrently, at most WEBHOOK_CONCURRENCY from this process: each attempt frees its
 * slot when it ends, and the poll goes on claiming while slow receivers keep theirs.
 */
export function startDeliveryWorker({ db, config, log, peers }: WorkerContext): Worker {
  if (!config.WEBHOOK_WORKER) return { stop: async () => undefined };
  const sources = EVENT_SOURCES.flatMap((name) => {
    const shared = config.DATABASE_URL && databaseUrl(config, name) === databaseUrl(config, 'webhooks');
    const source = peers[name] ?? (shared ? db : undefined);
    if (!source) log.warn({ source: name }, 'webhook events of this subgraph cannot be relayed: it runs elsewhere, on PGlite or on a database of its own');
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
  const inFlight = new Set<Promise<void>>();
  const stopping = new AbortController();

  /** Claims as many due deliveries as this process has free slots, and starts each on its own. */
  const fill = async () => {
    for (;;) {
      const free = Math.min(BATCH, config.WEBHOOK_CONCURRENCY - inFlight.size);
      if (stopped || free <= 0) return;
      const claimed = await claimDue(webhooks, config, free);
      for (const delivery of claimed) {
        const task = attempt(webhooks, config, log, delivery, stopping.signal)
          .catch((error: unknown) => log.warn({ err: error, deliveryId: delivery.id }, 'webhook attempt could not be recorded; its claim runs out and it is retried'))
          .finally(() => {
            inFlight.delete(task);
            wake();
          });
        inFlight.add(task);
      }
      if (claimed.length < free) return;
    }
  };

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
      await fill();
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
  /** Another round now (or right after the running one): events were committed, or a slot came free. */
  function wake() {
    if (running) again = true;
    else loop();
  }
  // Events committed in this process are relayed at once; others wait for the next poll.
  const unsubscribe = onEventsCommitted(wake);
  timer = setTimeout(loop, 0);
  return {
    async stop() {
      stopped = true;
      unsubscribe();
      clearTimeout(timer);
      // Attempts under way are abandoned, their claims freed: the next worker sends them again.
      stopping.abort();
      await current;
      await Promise.all(inFlight);
    },
  };
}
