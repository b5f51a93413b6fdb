import type { FastifyBaseLogger as Logger } from 'fastify';
import type { CommittedEvent } from './bus.ts';

type Listener = (event: CommittedEvent) => void;

/** Event ids remembered to drop a second publication (a relay that published and stopped before deleting). */
const REMEMBERED_IDS = 10_000;

/**
 * The live listeners of one process: each event goes to every listener, once per event id among the
 * last REMEMBERED_IDS, a failing listener logged and the others still called.
 */
export function liveFanout(log: Logger) {
  const listeners = new Set<Listener>();
  const seen = new Set<string>();
  return {
    get size() { return listeners.size; },
    add(listener: Listener) {
      listeners.add(listener);
      return () => { listeners.delete(listener); };
    },
    emit(event: CommittedEvent) {
      if (seen.has(event.eventId)) return;
      seen.add(event.eventId);
      // A Set iterates in insertion order: the first is the oldest.
      if (seen.size > REMEMBERED_IDS) seen.delete(seen.values().next().value!);
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (error) {
          log.error({ err: error, eventId: event.eventId }, 'a live event listener failed');
        }
      }
    },
  };
}
