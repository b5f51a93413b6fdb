import { AsyncLocalStorage } from 'node:async_hooks';
import { callerKey } from '../../subgraphs/platform/auth/caller-key.ts';
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { FormattedExecutionResult } from 'graphql';
import type { Counter, Gauge } from 'prom-client';
import type { CommittedEvent, EventBus } from '../../subgraphs/platform/events/bus.ts';
import { isUnauthenticated, type Subscriber, type SubscriberAuth } from './auth.ts';
import { Channel } from './channel.ts';
import type { ClientLimit } from './client-limit.ts';
import { CloseCode, closeErrorCode, closeReasonOf } from './close-codes.ts';
import type { PreparedSubscription } from './document.ts';
import { eventIdOf } from './event-extension.ts';
import type { EventReplay } from './replay.ts';
import type { RecordedEventRef } from '../../subgraphs/platform/events/history.ts';
import type { ExecutionBudget } from './budget.ts';
import type { ExecutionSlots } from './execution-slots.ts';
import { SharedExecution, shareKeyOf, type Member, type SharedExecutionContext } from './shared-execution.ts';

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
  /** Plans a subscription's query ahead of its first event, once per shared execution (its errors are its first event's). */
  plan?: (prepared: PreparedSubscription) => Promise<void>;
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
  /** SUBSCRIPTIONS_EXECUTIONS_PER_MINUTE, charged to each execution's client. */
  budget: ExecutionBudget;
  /** The executions in flight in this process. */
  slots: ExecutionSlots;
  /** false (SUBSCRIPTIONS_FAN_OUT=per-subscriber): every subscription runs its own execution. */
  sharing: boolean;
  metrics: { active: Gauge<'transport'>; pushed: Counter<'transport'>; closed: Counter<'reason'>; executions: Counter };
  log: FastifyBaseLogger;
}

/** Over SUBSCRIPTIONS_MAX_PER_CLIENT or SUBSCRIPTIONS_MAX_PER_PROCESS. */
export class TooManySubscriptions extends Error {}

interface Watch {
  id: string;
  holder: Holder;
  prepared: PreparedSubscription;
  channel: Channel<FormattedExecutionResult>;
  /** The execution it shares (shared-execution.ts), under `key` among its resource key's. */
  shared: SharedExecution;
  key: string;
  member: Member;
}

/** The last result of a stream that a transport without close codes (SSE) ends. */
export const closingResult = (code: number, reason: string): FormattedExecutionResult => ({
  errors: [{ message: reason, extensions: { code: closeErrorCode[code] ?? 'CLOSED', closeCode: code } }],
});

/**
 * The subscriptions of this process. Each committed event (EventBus.live) goes to the shared
 * executions watching its resource key, of the event's organisation, whose field it concerns; each
 * runs its query once for the event for all its subscriptions (shared-execution.ts), one event after
 * the other, within its client's budget, and hands the result to their transports.
 */
export class SubscriptionEngine {
  /** Shared executions by resource key, then by share key. */
  private readonly byKey = new Map<string, Map<string, SharedExecution>>();
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
  private readonly context: SharedExecutionContext;

  constructor(options: EngineOptions) {
    this.options = options;
    const { execute, auth, budget, slots, log, metrics } = options;
    this.context = { execute, auth, budget, slots, log, metrics, close: (holder, code, reason) => this.close(holder, code, reason) };
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
   * that the replay did not hold: every event once, in order (a late live event the replay had is
   * fenced off: shared-execution.ts).
   */
  async subscribe(
    holder: Holder, prepared: PreparedSubscription, anchor?: RecordedEventRef,
  ): Promise<Channel<FormattedExecutionResult>> {
    const { maxPerProcess, maxPerClient, clientLimit } = this.options;
    if (this.count >= maxPerProcess) throw new TooManySubscriptions(`Too many subscriptions: this server holds its maximum of ${maxPerProcess}; retry on another`);
    const id = randomUUID();
    const clientId = callerKey(holder.subscriber.caller);
    if (!(await clientLimit.acquire(clientId, id))) throw new TooManySubscriptions(`Too many subscriptions: client ${clientId} holds its maximum of ${maxPerClient}`);
    const key = this.options.sharing ? shareKeyOf(prepared, holder.subscriber.caller) : id;
    // A new execution's query is planned before it is held: a large document's planning holds the loop
    // tens of ms, the subscriber's own wait, never on the way of the first events (20 documents' were).
    const { plan } = this.options;
    if (plan && !this.byKey.get(prepared.resourceKey)?.has(key)) await this.detached(() => plan(prepared).catch(() => undefined));
    if (this.released.has(holder) || this.closing.has(holder)) {
      // Its connection closed while the place was being taken (a Redis round trip) or planned: nothing to start.
      clientLimit.release(clientId, id);
      const none = new Channel<FormattedExecutionResult>(() => undefined);
      none.end();
      return none;
    }
    this.count += 1;
    this.options.metrics.active.inc({ transport: holder.transport });
    const channel = new Channel<FormattedExecutionResult>(() => this.forget(watch));
    const watching = this.byKey.get(prepared.resourceKey) ?? new Map<string, SharedExecution>();
    this.byKey.set(prepared.resourceKey, watching);
    let shared = watching.get(key);
    if (!shared) shared = new SharedExecution(prepared, holder.subscriber.caller, this.context);
    watching.set(key, shared);
    const watch: Watch = { id, holder, prepared, channel, shared, key, member: shared.join(holder, channel) };
    this.open(holder);
    this.holders.get(holder)!.add(watch);
    if (anchor) {
      watch.member.held = [];
      watch.member.fence = { source: anchor.source, seq: anchor.seq };
      void this.detached(() => this.replayAfter(watch, anchor));
    }
    return channel;
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
    for (const shared of this.byKey.get(event.resourceKey)?.values() ?? []) {
      if (!shared.concerns(event)) continue;
      shared.pending.add(event);
      for (const { holder, channel, held } of shared.members) {
        const waiting = shared.pending.length + channel.backlog + (held?.length ?? 0);
        const unsent = holder.buffered?.() ?? 0;
        if (waiting <= queueMax && unsent <= bufferMax) continue;
        this.options.log.warn({ clientId: callerKey(holder.subscriber.caller), waiting, unsent }, 'subscription dropped: slow consumer');
        this.close(holder, CloseCode.SlowConsumer, `slow consumer: ${waiting > queueMax ? `more than ${queueMax} events waiting` : `more than ${bufferMax} bytes unsent`}`);
      }
      if (shared.members.size) void this.detached(() => shared.run());
    }
  }

  /**
   * Runs the events after `anchor` (the history's, then this process's not recorded yet) for this
   * subscription alone, then hands over the live results held meanwhile, less those of events
   * replayed. Replay is not coalesced but is charged to the budget; a subscriber more than queueMax
   * results behind is a slow consumer, as with live events.
   */
  private async replayAfter(watch: Watch, anchor: RecordedEventRef) {
    const { holder, prepared, channel, member } = watch;
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
        member.fence = { source: event.source, seq: event.seq };
        await watch.shared.replay(member, event);
      }
    } catch (error) {
      const { name: type, message } = error as Error;
      log.error({ err: { type, message } }, 'a subscription replay failed');
      const why = 'Try again later: the event history could not be read';
      return channel.end(closingResult(CloseCode.TryAgainLater, why));
    } finally {
      const held = member.held ?? [];
      member.held = undefined;
      for (const result of held) {
        if (channel.closed) break;
        if (!replayed.has(eventIdOf(result) ?? '')) channel.push(result);
      }
    }
  }

  private forget(watch: Watch) {
    watch.shared.members.delete(watch.member);
    const watching = this.byKey.get(watch.prepared.resourceKey);
    if (!watch.shared.members.size && watching?.get(watch.key) === watch.shared) watching.delete(watch.key);
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

  /**
   * Checks every holder's token (expiry, revocation) without waiting for an event; one round at a
   * time. Holders presenting the same token (one client's many sockets) share one check.
   */
  private async recheckAll() {
    if (this.rechecking) return;
    this.rechecking = true;
    try {
      const byToken = Map.groupBy(this.holders.keys(), (holder) => holder.subscriber.authorization);
      await Promise.all([...byToken.values()].map((holding) => this.options.auth.recheck(holding[0]!.subscriber).catch((error: unknown) => {
        if (!isUnauthenticated(error)) return;
        for (const holder of holding) this.close(holder, CloseCode.Unauthorized, `Unauthorized: ${(error as Error).message}`);
      })));
    } finally {
      this.rechecking = false;
    }
  }
}
