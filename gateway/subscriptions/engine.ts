import { AsyncLocalStorage } from 'node:async_hooks';
import { callerKey } from '../../subgraphs/platform/auth/caller-key.ts';
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { FormattedExecutionResult } from 'graphql';
import type { Counter, Gauge } from 'prom-client';
import type { CommittedEvent, EventBus } from '../../subgraphs/platform/events/bus.ts';
import { AppError } from '../../subgraphs/platform/errors.ts';
import type { Subscriber, SubscriberAuth } from './auth.ts';
import { Channel } from './channel.ts';
import type { ClientLimit } from './client-limit.ts';
import { CloseCode, closeErrorCode, closeReasonOf } from './close-codes.ts';
import type { PreparedSubscription } from './document.ts';
import { withEvent } from './event-extension.ts';
import type { EventReplay } from './replay.ts';
import type { RecordedEventRef } from '../../subgraphs/platform/events/history.ts';

export type Transport = 'ws' | 'sse' | 'multipart';

/** A WebSocket connection, or one SSE or multipart subscription: who the engine checks, and closes. */
export interface Holder {
  transport: Transport;
  subscriber: Subscriber;
  /** Closes the connection, and so its subscriptions (the transport then calls `release`). Without it (SSE, multipart), each subscription's stream ends with a last error result. */
  close?(code: number, reason: string): void;
  /** Bytes written to the connection and not yet sent (a WebSocket's bufferedAmount, a multipart stream's buffer). */
  buffered?(): number;
}

/** Runs a subscription's query for its subscriber (gateway/app.ts: through Apollo Server, with the subscriber's token). */
/** Runs a subscription's query for one event as its subscriber (whose token was just checked again). */
export type ExecuteQuery = (prepared: PreparedSubscription, subscriber: Subscriber) => Promise<FormattedExecutionResult>;

export interface EngineOptions {
  /** Calls its listener with every committed event (EventBus.live); returns the unsubscribe. */
  live: EventBus['live'];
  execute: ExecuteQuery;
  auth: SubscriberAuth;
  /** Subscriptions resumed `after` an event: the history, and the events this process had (replay.ts). */
  replay: EventReplay;
  clientLimit: ClientLimit;
  maxPerClient: number;
  maxPerProcess: number;
  /** Events waiting (not yet run, or run and not yet sent) past which a subscriber is a slow consumer. */
  queueMax: number;
  /** A WebSocket's unsent bytes past which its subscriber is a slow consumer. */
  bufferMax: number;
  /** How often every holder's token is checked again without an event (revocation, expiry). */
  recheckEveryMs: number;
  metrics: { active: Gauge<'transport'>; pushed: Counter<'transport'>; closed: Counter<'reason'> };
  log: FastifyBaseLogger;
}

/** Over SUBSCRIPTIONS_MAX_PER_CLIENT or SUBSCRIPTIONS_MAX_PER_PROCESS. */
export class TooManySubscriptions extends Error {}

interface Watch {
  id: string;
  holder: Holder;
  prepared: PreparedSubscription;
  channel: Channel<FormattedExecutionResult>;
  /** Events received and not yet run, oldest first. */
  events: CommittedEvent[];
  running: boolean;
  /** Set while the history after its `after` event is replayed: live events wait in `events` meanwhile. */
  replaying?: boolean;
}

const isUnauthenticated = (error: unknown) => error instanceof AppError && error.code === 'UNAUTHENTICATED';

/** The last result of a stream that a transport without close codes (SSE) ends. */
export const closingResult = (code: number, reason: string): FormattedExecutionResult => ({
  errors: [{ message: reason, extensions: { code: closeErrorCode[code] ?? 'CLOSED', closeCode: code } }],
});

/**
 * The subscriptions of this process. Each committed event (EventBus.live) goes to the subscriptions
 * watching its resource key, of the event's organisation, whose field it concerns; each such
 * subscription runs its query for the event, one event after the other, checking its subscriber's
 * token first, and hands the result to its transport.
 */
export class SubscriptionEngine {
  private readonly byKey = new Map<string, Set<Watch>>();
  private readonly holders = new Map<Holder, Set<Watch>>();
  private readonly stopListening: () => void;
  private readonly ticker: NodeJS.Timeout;
  private rechecking = false;
  /** Connections asked to close, until their transport releases them, and connections released. */
  private readonly closing = new WeakSet<Holder>();
  private readonly released = new WeakSet<Holder>();
  private count = 0;
  /**
   * The async context the engine was built in (no request's). Embedded events arrive inside the
   * commit of the request that wrote them, whose context (its forked EntityManager) a query run
   * from there would otherwise inherit.
   */
  private readonly detached = AsyncLocalStorage.snapshot();

  private readonly options: EngineOptions;

  constructor(options: EngineOptions) {
    this.options = options;
    this.stopListening = options.live((event) => this.dispatch(event));
    this.ticker = setInterval(() => { void this.recheckAll(); }, options.recheckEveryMs);
    this.ticker.unref();
  }

  /** Active subscriptions in this process. */
  get active() { return this.count; }

  authenticate(authorization: string | undefined) { return this.options.auth.authenticate(authorization); }

  /** Starts checking a connection's token on the timer, before it holds any subscription. */
  open(holder: Holder) { if (!this.holders.has(holder)) this.holders.set(holder, new Set()); }

  /** The event a subscription resumes after (its `after`), or undefined; throws SubscriptionRefused. */
  anchorOf(subscriber: Subscriber, prepared: PreparedSubscription) {
    return this.options.replay.anchor(subscriber.caller.orgId, prepared);
  }

  /**
   * Starts a subscription; throws TooManySubscriptions over a limit. With `anchor` (anchorOf), it takes
   * live events from now on, replays the history after the anchor first, then runs the live events
   * that the replay did not hold: every event once, in order.
   */
  async subscribe(
    holder: Holder, prepared: PreparedSubscription, anchor?: RecordedEventRef,
  ): Promise<AsyncIterableIterator<FormattedExecutionResult>> {
    const { maxPerProcess, maxPerClient, clientLimit } = this.options;
    if (this.count >= maxPerProcess) throw new TooManySubscriptions(`Too many subscriptions: this server holds its maximum of ${maxPerProcess}; retry on another`);
    const id = randomUUID();
    const clientId = callerKey(holder.subscriber.caller);
    if (!(await clientLimit.acquire(clientId, id))) throw new TooManySubscriptions(`Too many subscriptions: client ${clientId} holds its maximum of ${maxPerClient}`);
    if (this.released.has(holder) || this.closing.has(holder)) {
      // Its connection closed while the place was being taken (a Redis round trip): nothing to start.
      clientLimit.release(clientId, id);
      const none = new Channel<FormattedExecutionResult>(() => undefined);
      none.end();
      return none;
    }
    this.count += 1;
    this.options.metrics.active.inc({ transport: holder.transport });
    const watch: Watch = { id, holder, prepared, events: [], running: false, channel: new Channel(() => this.forget(watch)) };
    this.open(holder);
    this.holders.get(holder)!.add(watch);
    const watching = this.byKey.get(prepared.resourceKey) ?? new Set<Watch>();
    this.byKey.set(prepared.resourceKey, watching.add(watch));
    if (anchor) {
      watch.replaying = true;
      void this.detached(() => this.replayAfter(watch, anchor));
    }
    return watch.channel;
  }

  /** Ends every subscription of a connection that closed. */
  release(holder: Holder) {
    for (const watch of this.holders.get(holder) ?? []) void watch.channel.return();
    this.holders.delete(holder);
    this.released.add(holder);
  }

  /** Closes a holder with `code`: its connection, or (SSE) each of its streams after a last error result. */
  close(holder: Holder, code: number, reason: string) {
    if (!this.holders.has(holder) || this.closing.has(holder)) return;
    this.closing.add(holder);
    // A WebSocket's close is counted by its connection (ws-connection.ts), whoever closes it.
    if (holder.close) {
      holder.close(code, reason);
      return;
    }
    this.options.metrics.closed.inc({ reason: closeReasonOf(code) });
    for (const watch of this.holders.get(holder) ?? []) watch.channel.end(closingResult(code, reason));
    this.holders.delete(holder);
  }

  /** On shutdown: every subscription ends with 1001 (going away). */
  async shutdown() {
    this.stopListening();
    clearInterval(this.ticker);
    for (const holder of [...this.holders.keys()]) this.close(holder, CloseCode.GoingAway, 'going away: the server is shutting down');
    this.options.clientLimit.close();
  }

  private dispatch(event: CommittedEvent) {
    const { queueMax, bufferMax } = this.options;
    this.options.replay.recent.remember(event);
    for (const watch of this.byKey.get(event.resourceKey) ?? []) {
      if (watch.holder.subscriber.caller.orgId !== event.orgId || !watch.prepared.field.events.includes(event.type)) continue;
      watch.events.push(event);
      const waiting = watch.events.length + watch.channel.backlog;
      const unsent = watch.holder.buffered?.() ?? 0;
      if (waiting > queueMax || unsent > bufferMax) {
        this.options.log.warn({ clientId: callerKey(watch.holder.subscriber.caller), waiting, unsent }, 'subscription dropped: slow consumer');
        this.close(watch.holder, CloseCode.SlowConsumer, `slow consumer: ${waiting > queueMax ? `more than ${queueMax} events waiting` : `more than ${bufferMax} bytes unsent`}`);
        continue;
      }
      if (!watch.running && !watch.replaying) void this.detached(() => this.run(watch));
    }
  }

  /**
   * Runs the events after `anchor` (the history's, then this process's not recorded yet), then hands
   * over to the live events that arrived meanwhile, less those replayed. Replay is not coalesced; a
   * subscriber more than queueMax results behind is a slow consumer, as with live events.
   */
  private async replayAfter(watch: Watch, anchor: RecordedEventRef) {
    const { holder, prepared, channel } = watch;
    const { queueMax, replay, log } = this.options;
    const replayed = new Set<string>();
    try {
      for await (const event of replay.events(holder.subscriber.caller.orgId, prepared, anchor)) {
        if (channel.closed) return;
        if (channel.backlog > queueMax) {
          const why = `slow consumer: more than ${queueMax} events waiting`;
          return this.close(holder, CloseCode.SlowConsumer, why);
        }
        replayed.add(event.eventId);
        await this.runOne(watch, event);
      }
    } catch (error) {
      const { name: type, message } = error as Error;
      log.error({ err: { type, message } }, 'a subscription replay failed');
      const why = 'Try again later: the event history could not be read';
      return channel.end(closingResult(CloseCode.TryAgainLater, why));
    } finally {
      watch.replaying = false;
    }
    const live = watch.events.filter((e) => !replayed.has(e.eventId) && e.seq > anchor.seq);
    watch.events.splice(0, watch.events.length, ...live);
    if (live.length && !watch.running) await this.run(watch);
  }

  /** Runs a subscription's waiting events in order, each after checking its subscriber's token again. */
  private async run(watch: Watch) {
    watch.running = true;
    try {
      while (watch.events.length && !watch.channel.closed) {
        await this.runOne(watch, watch.events.shift()!);
      }
    } finally {
      watch.running = false;
    }
  }

  private async runOne({ holder, prepared, channel }: Watch, event: RecordedEventRef) {
    try {
      await this.options.auth.recheck(holder.subscriber);
      const result = await this.options.execute(prepared, holder.subscriber);
      if (channel.closed) return;
      const refused = result.errors?.find((e) => e.extensions?.code === 'UNAUTHENTICATED');
      if (refused) return this.close(holder, CloseCode.Unauthorized, `Unauthorized: ${refused.message}`);
      // Null without errors: not (or no longer) this organisation's entity. Nothing to push.
      if (!result.errors && result.data?.[prepared.responseKey] == null) return;
      channel.push(withEvent(result, event));
      this.options.metrics.pushed.inc({ transport: holder.transport });
    } catch (error) {
      if (isUnauthenticated(error)) return this.close(holder, CloseCode.Unauthorized, `Unauthorized: ${(error as Error).message}`);
      this.options.log.error({ err: { type: (error as Error).name, message: (error as Error).message } }, 'a subscription event failed');
      const code = error instanceof AppError ? error.code : 'INTERNAL_SERVER_ERROR';
      const message = 'This event could not be run; later events will be';
      const failed = { errors: [{ message, extensions: { code } }] };
      channel.push(withEvent(failed, event));
    }
  }

  private forget(watch: Watch) {
    const watching = this.byKey.get(watch.prepared.resourceKey);
    watching?.delete(watch);
    if (watching && !watching.size) this.byKey.delete(watch.prepared.resourceKey);
    const held = this.holders.get(watch.holder);
    held?.delete(watch);
    // An SSE holder is its one subscription; a WebSocket connection stays until it closes.
    if (held && !held.size && !watch.holder.close) {
      this.holders.delete(watch.holder);
      if (!this.closing.has(watch.holder)) this.options.metrics.closed.inc({ reason: 'client_closed' });
    }
    this.options.clientLimit.release(callerKey(watch.holder.subscriber.caller), watch.id);
    this.count -= 1;
    this.options.metrics.active.dec({ transport: watch.holder.transport });
  }

  /** Checks every holder's token (expiry, revocation) without waiting for an event; one round at a time. */
  private async recheckAll() {
    if (this.rechecking) return;
    this.rechecking = true;
    try {
      await Promise.all([...this.holders.keys()].map((holder) => this.options.auth.recheck(holder.subscriber).catch((error: unknown) => {
        if (isUnauthenticated(error)) this.close(holder, CloseCode.Unauthorized, `Unauthorized: ${(error as Error).message}`);
      })));
    } finally {
      this.rechecking = false;
    }
  }
}
