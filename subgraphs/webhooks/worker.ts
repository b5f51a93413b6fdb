import type { Consumer, EventBus } from '../platform/events/bus.ts';
import { runner } from '../platform/db/run.ts';
import type { Worker, WorkerContext } from '../platform/subgraph.ts';
import { anyClaimable, attempt, claimDue } from './deliver.ts';
import { enqueueDeliveries } from './enqueue.ts';
import { recordHistory } from './history.ts';
import { prune } from './prune.ts';

/** Deliveries claimed per statement. */
const BATCH = 50;
/** How often expired history and finished deliveries are deleted. */
const PRUNE_EVERY_MS = 10 * 60_000;
/** The bus's durable consumers: every process that runs the webhooks subgraph shares each one. */
export const HISTORY_CONSUMER = 'history';
export const DELIVERY_CONSUMER = 'webhooks';

/** Opens a durable consumer, logging (not throwing) when the bus refuses it. */
function consumer(bus: EventBus, name: string, log: WorkerContext['log'], handler: Parameters<EventBus['consume']>[1]): Promise<Consumer | undefined> {
  return bus.consume(name, handler).catch((error: unknown) => {
    log.error({ err: error, consumer: name }, 'event consumer could not start; its events wait in the stream');
    return undefined;
  });
}

/**
 * The webhooks subgraph's part of the event path, in every process that runs it. The `history`
 * consumer records every committed event; the `webhooks` consumer turns each into one pending
 * delivery per matching subscription and wakes this process's claiming loop. Each event is
 * acknowledged once its rows are written, and both writes are idempotent by event id, so an event
 * handed over again (a redelivery, a relay that published twice) changes nothing. With
 * WEBHOOK_WORKER=false the process sends nothing: its deliveries wait in the database for one that does.
 * Deliveries go concurrently, at most WEBHOOK_CONCURRENCY from this process: each attempt frees its
 * slot when it ends, and the loop goes on claiming while slow receivers keep theirs; it also polls,
 * for retries that come due and deliveries other processes enqueued.
 */
export function startDeliveryWorker({ db, config, log, bus }: WorkerContext): Worker {
  const webhooks = runner(db);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  const inFlight = new Set<Promise<void>>();
  const stopping = new AbortController();

  /**
   * Claims as many due deliveries as this process has free slots, and starts each on its own.
   * `polled`: on the timer, nothing enqueued here: the claim only once a probe finds one due.
   */
  const fill = async (polled: boolean) => {
    if (polled && !await anyClaimable(webhooks)) return;
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

  let running = false;
  let again = false;
  const loop = (polled = false) => {
    if (stopped || !config.WEBHOOK_WORKER) return;
    clearTimeout(timer);
    running = true;
    current = fill(polled).catch((error: unknown) => log.warn({ err: error }, 'webhook delivery round failed; retrying')).finally(() => {
      running = false;
      if (stopped) return;
      timer = again ? setTimeout(loop, 0) : setTimeout(loop, config.WEBHOOK_POLL_INTERVAL_MS, true);
      again = false;
    });
  };
  /** Another round now (or right after the running one): a delivery was enqueued here, or a slot came free. */
  function wake() {
    if (running) again = true;
    else loop();
  }

  // Registered at once (the in-process bus hands an event only to the consumers registered when it is published).
  const consumers = [
    consumer(bus, HISTORY_CONSUMER, log, (event) => recordHistory(webhooks, event)),
    consumer(bus, DELIVERY_CONSUMER, log, async (event) => {
      if (await enqueueDeliveries(webhooks, event)) wake();
    }),
  ];
  const pruning = setInterval(() => {
    prune(db, config.EVENTS_HISTORY_DAYS).catch((error: unknown) => log.warn({ err: error }, 'pruning the event history and delivery log failed; retrying'));
  }, PRUNE_EVERY_MS);
  timer = setTimeout(loop, 0);
  return {
    ready: Promise.all(consumers).then(() => undefined),
    async stop() {
      stopped = true;
      clearInterval(pruning);
      // No event is taken from here on; one being handled finishes (or comes again, to another process).
      await Promise.all(consumers.map(async (c) => (await c)?.stop()));
      clearTimeout(timer);
      // Attempts under way are abandoned, their claims freed: the next worker sends them again.
      stopping.abort();
      await current;
      await Promise.all(inFlight);
    },
  };
}
