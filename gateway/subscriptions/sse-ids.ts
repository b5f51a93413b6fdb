import type { ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';
import type { PreparedSubscription } from './document.ts';
import type { PreSerialised } from './pre-serialised.ts';

const NEXT = 'event: next\n';
/** How the result's `extensions.event` (event-extension.ts) starts in its JSON: extensions come last. */
const EVENT_ID = '"event":{"id":"';
/** Event ids are the outbox's UUIDs. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The event id of a graphql-sse `next` message (a result, or `{ id, payload }` on a reserved stream). */
function eventIdOf(message: string) {
  const at = message.lastIndexOf(EVENT_ID);
  if (at < 0) return undefined;
  const start = at + EVENT_ID.length;
  const id = message.slice(start, message.indexOf('"', start));
  return UUID.test(id) ? id : undefined;
}

/**
 * Gives each `next` message graphql-sse writes to `raw` its pre-serialised payload (`results`) and
 * the SSE `id:` field of its result's event (graphql-sse writes none), so that an EventSource that
 * reconnects sends it back as `Last-Event-ID`. graphql-sse writes each message as one string.
 */
export function withEventIds(raw: ServerResponse, results: PreSerialised) {
  const write = raw.write.bind(raw) as (chunk: unknown, ...rest: unknown[]) => boolean;
  raw.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk !== 'string' || !chunk.startsWith(NEXT)) return write(chunk, ...rest);
    const message = results.fill(chunk);
    const id = eventIdOf(message);
    return write(id ? `id: ${id}\n${message}` : message, ...rest);
  }) as ServerResponse['write'];
}

/**
 * The subscription resumed after the request's `Last-Event-ID` (what an EventSource sends when it
 * reconnects), which wins over the document's `after`: it names a later event. A reserved stream's
 * operations come on requests of their own, which carry none.
 */
export function resumed(prepared: PreparedSubscription, request: FastifyRequest): PreparedSubscription {
  const last = request.headers['last-event-id'];
  return typeof last === 'string' && last.trim() ? { ...prepared, after: last.trim() } : prepared;
}
