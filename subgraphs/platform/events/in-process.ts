import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger as Logger } from 'fastify';
import type { CommittedEvent, Consumer, EventBus } from './bus.ts';
import { liveFanout } from './live-fanout.ts';

type Handler = (event: CommittedEvent) => Promise<void>;

interface Registered {
  handler: Handler;
  stopped: boolean;
  /** The handler calls under way, which stop() waits for. */
  running: Set<Promise<void>>;
}

/**
 * The bus of one process, without NATS (the embedded default). It stores nothing: an event is "stored"
 * once every durable consumer registered in this process has handled it, so publish() resolves only
 * then (a throwing handler is called again after `retryMs`, as JetStream redelivers after its ack wait)
 * and the relay deletes the outbox row only after that. Consumers register synchronously when consume()
 * is called, and relays start after the workers that register them (gateway/stack.ts), so an outbox row
 * is never deleted unhandled. A consumer stopped while an event waits for it makes publish() reject: the
 * row stays in the outbox and is published again (consumers are idempotent by event id).
 */
export function inProcessBus(options: { log: Logger; retryMs: number }): EventBus {
  const { log, retryMs } = options;
  const live = liveFanout(log);
  /** Durable consumers by name: each event goes to one of a name's handlers. */
  const consumers = new Map<string, Registered[]>();
  let turn = 0;

  const handleOnce = async (name: string, event: CommittedEvent) => {
    for (let attempt = 1; ; attempt++) {
      const group = (consumers.get(name) ?? []).filter((c) => !c.stopped);
      if (!group.length) throw new Error(`durable consumer ${name} stopped before event ${event.eventId} was handled`);
      const chosen = group[turn++ % group.length]!;
      const call = chosen.handler(event);
      const settled = call.then(() => undefined, () => undefined);
      chosen.running.add(settled);
      try {
        await call;
        return;
      } catch (error) {
        log.error({ err: error, consumer: name, eventId: event.eventId, attempt }, 'an event consumer failed; the event comes again');
        await sleep(retryMs);
      } finally {
        chosen.running.delete(settled);
      }
    }
  };

  return {
    async publish(event) {
      live.emit(event);
      await Promise.all([...consumers.keys()].map((name) => handleOnce(name, event)));
    },
    live: (listener) => live.add(listener),
    consume(name, handler): Promise<Consumer> {
      const registered: Registered = { handler, stopped: false, running: new Set() };
      consumers.set(name, [...(consumers.get(name) ?? []), registered]);
      return Promise.resolve({
        async stop() {
          registered.stopped = true;
          const left = (consumers.get(name) ?? []).filter((c) => c !== registered);
          if (left.length) consumers.set(name, left);
          else consumers.delete(name);
          await Promise.all(registered.running);
        },
      });
    },
    async close() {
      for (const group of consumers.values()) for (const consumer of group) consumer.stopped = true;
      await Promise.all([...consumers.values()].flat().flatMap((c) => [...c.running]));
      consumers.clear();
    },
  };
}
