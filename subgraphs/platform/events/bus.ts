import type { EventType } from '../webhooks/events.ts';

/**
 * A committed event as an area's relay publishes it: its outbox row, whole. The relay publishes an
 * area's rows in outbox order (`seq`), so events of one resource arrive in commit order.
 */
export interface CommittedEvent {
  /** The outbox row's id; the stream's message id, and every consumer's idempotency key. */
  eventId: string;
  /** The area (subgraph) whose outbox recorded it. */
  source: string;
  seq: number;
  orgId: string;
  type: EventType;
  /** `<kind>:<id>` as the outbox writes it, e.g. `rescue:<reqId>`. */
  resourceKey: string;
  /** The REST path of the resource. */
  resourcePath: string;
  /** The resource as its REST path returns it (never MVR contents or dates of birth). */
  resource: Record<string, unknown>;
  /** ISO 8601. */
  occurredAt: string;
  /** Recorded for a sandbox organisation (docs/sandbox.md). */
  sandbox?: true;
}

/** A durable consumer's handle. */
export interface Consumer {
  /** Stops taking events; resolves once the handler running, if any, has ended. */
  stop(): Promise<void>;
}

/**
 * The one path of committed events: NATS JetStream when NATS_URL is set, in-process otherwise.
 */
export interface EventBus {
  /** Resolves once the event is stored (published again with the same id, it is not stored twice within the de-duplication window). */
  publish(event: CommittedEvent): Promise<void>;
  /** Calls `listener` with every event published from now on, in stream order, in this process only; returns the unsubscribe. */
  live(listener: (event: CommittedEvent) => void): () => void;
  /**
   * A durable consumer named `name`, shared by every process that opens it: each event goes to one of
   * them, is acknowledged once `handler` resolves, and comes again (to any of them) when it throws or
   * its process dies first. Handlers must be idempotent by `eventId`.
   */
  consume(name: string, handler: (event: CommittedEvent) => Promise<void>): Promise<Consumer>;
  close(): Promise<void>;
}
