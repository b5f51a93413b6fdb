import type { FastifyBaseLogger as Logger } from 'fastify';
import pg from 'pg';
import type { EventType } from './events.ts';
import { LIVE_EVENTS_CHANNEL } from './live-trigger.ts';
import { onEventsCommitted, type CommittedEvents } from './outbox.ts';

/** A committed outbox event, without its resource: enough to find who watches it and read it again. */
export interface LiveEvent {
  /** The subgraph whose outbox recorded it. */
  source: string;
  seq: number;
  eventId: string;
  orgId: string;
  type: EventType;
  /** `<kind>:<id>` as the outbox writes it, e.g. `rescue:<reqId>`, `booking:<id>`, `user:<userId>`. */
  resourceKey: string;
  /** ISO 8601. */
  occurredAt: string;
}

export interface LiveEvents {
  /** Calls `listener` with each committed event, in commit order per source; returns the unsubscribe. */
  subscribe(listener: (event: LiveEvent) => void): () => void;
  close(): Promise<void>;
}

type Listener = (event: LiveEvent) => void;

/** Reconnection waits of the LISTEN connection, doubling from the first to the last. */
const RETRY_FIRST_MS = 100;
const RETRY_MAX_MS = 5_000;
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * How often the LISTEN connection is checked with a query, which must answer within as long: a
 * connection that a network device dropped without a word (idle timeouts) would otherwise stay
 * silent, losing every event, until TCP gives up hours later. The query also keeps it from idling.
 */
const HEARTBEAT_MS = 15_000;
/** How the LISTEN connection names itself in pg_stat_activity. */
export const LIVE_EVENTS_APPLICATION = 'live-events';

/**
 * The events every process of the deployment commits, as they commit. On PostgreSQL a connection
 * of this process LISTENs in each database that holds outboxes (DATABASE_URL and every area's own:
 * a notification stays in its database) to what the outbox triggers announce, whichever process
 * committed; on the embedded database, which one process owns, they come from that process's commits.
 */
export async function startLiveEvents(options: { databaseUrls: readonly string[]; log: Logger; heartbeatMs?: number }): Promise<LiveEvents> {
  const listeners = new Set<Listener>();
  const emit = (event: LiveEvent) => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        options.log.error({ err: error, eventId: event.eventId }, 'a live event listener failed');
      }
    }
  };
  const subscribe = (listener: Listener) => {
    listeners.add(listener);
    return () => { listeners.delete(listener); };
  };
  if (!options.databaseUrls.length) return inProcess(emit, subscribe);
  const listening = await Promise.allSettled(options.databaseUrls.map((url) => listen(url, options.log, options.heartbeatMs ?? HEARTBEAT_MS, emit)));
  const closeAll = () => Promise.all(listening.map((l) => (l.status === 'fulfilled' ? l.value() : undefined))).then(() => undefined);
  const failed = listening.find((l) => l.status === 'rejected');
  if (failed) {
    await closeAll();
    throw failed.reason;
  }
  return { subscribe, close: closeAll };
}

async function inProcess(emit: Listener, subscribe: LiveEvents['subscribe']): Promise<LiveEvents> {
  const unsubscribe = onEventsCommitted(({ source, rows }: CommittedEvents) => {
    for (const row of [...rows].sort((a, b) => a.seq - b.seq)) {
      emit({
        source, seq: row.seq, eventId: row.eventId, orgId: row.orgId, type: row.type as EventType,
        resourceKey: row.resourceKey, occurredAt: row.occurredAt.toISOString(),
      });
    }
  });
  return { subscribe, close: async () => unsubscribe() };
}

/**
 * One LISTEN connection, started before this resolves; resolves to its close. When it drops or stops answering, it is
 * opened again with backoff; the loss is logged once, and the recovery. Notifications sent while
 * it is down are not delivered to it (PostgreSQL keeps none for a session that is gone).
 */
async function listen(databaseUrl: string, log: Logger, heartbeatMs: number, emit: Listener): Promise<() => Promise<void>> {
  let client: pg.Client | undefined;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let wait = RETRY_FIRST_MS;

  const received = (message: pg.Notification) => {
    if (message.channel !== LIVE_EVENTS_CHANNEL || !message.payload) return;
    let event: LiveEvent;
    try {
      event = JSON.parse(message.payload) as LiveEvent;
    } catch {
      log.warn({ channel: message.channel }, 'a live event notification that is not JSON was ignored');
      return;
    }
    emit(event);
  };

  const connect = async () => {
    const next = new pg.Client({
      connectionString: databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, query_timeout: heartbeatMs, keepAlive: true,
      application_name: LIVE_EVENTS_APPLICATION,
    });
    next.on('notification', received);
    // A client that fails after connecting emits 'error' (e.g. pg_terminate_backend) and then 'end'.
    next.on('error', () => lost(next));
    next.on('end', () => lost(next));
    try {
      await next.connect();
      await next.query(`listen ${LIVE_EVENTS_CHANNEL}`);
    } catch (error) {
      void next.end().catch(() => undefined);
      throw error;
    }
    if (closed) await next.end();
    else client = next;
  };

  const retry = () => {
    timer = setTimeout(() => {
      connect().then(() => {
        wait = RETRY_FIRST_MS;
        if (!closed) log.info('live events: listening again');
      }, () => {
        wait = Math.min(wait * 2, RETRY_MAX_MS);
        if (!closed) retry();
      });
    }, wait);
  };

  function lost(which: pg.Client) {
    if (closed || client !== which) return;
    client = undefined;
    log.warn('live events: the LISTEN connection was lost; reconnecting');
    retry();
  }

  await connect();
  const heartbeat = setInterval(() => {
    const current = client;
    current?.query('select 1').catch(() => {
      lost(current);
      // Over a dead link the goodbye may never complete: the next connection does not wait for it.
      void current.end().catch(() => undefined);
    });
  }, heartbeatMs);
  return async () => {
    closed = true;
    clearInterval(heartbeat);
    clearTimeout(timer);
    await client?.end().catch(() => undefined);
    client = undefined;
  };
}
