import type { Worker, WorkerContext } from '../platform/subgraph.ts';
import { runner } from '../platform/db/run.ts';
import { attempt, claimDue, DELIVERIES } from './deliver.ts';

/** Deliveries claimed per statement. */
const BATCH = 50;
/** Finished deliveries stay readable in the log this long, then go (checked every few minutes). */
export const LOG_RETENTION_DAYS = 30;
const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Polls the due deliveries (the bus's consumer creates them). They go concurrently, at most
 * WEBHOOK_CONCURRENCY from this process: each attempt frees its slot when it ends, and the poll goes on
 * claiming while slow receivers keep theirs.
 */
export function startDeliveryWorker({ db, config, log }: WorkerContext): Worker {
  if (!config.WEBHOOK_WORKER) return { stop: async () => undefined };
  const webhooks = runner(db);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
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
  /** Another round now (or right after the running one): a slot came free. */
  function wake() {
    if (running) again = true;
    else loop();
  }
  timer = setTimeout(loop, 0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      // Attempts under way are abandoned, their claims freed: the next worker sends them again.
      stopping.abort();
      await current;
      await Promise.all(inFlight);
    },
  };
}
