import { EventEmitter } from 'node:events';
import { defineEntity, p, type EntityManager, type EventManager, type EventSubscriber, type TransactionEventArgs } from '@mikro-orm/core';
import { inSandbox, tenantProperties } from '../db/tenant.ts';
import type { EventType } from './events.ts';

/**
 * An event waiting to be published on the event bus. Rows are created with the change they describe
 * (same EntityManager, same flush, so the same transaction) and removed by the area's relay
 * (events/relay.ts) once the bus acknowledged them. `seq` orders the events of one source.
 */
export const WebhookOutboxSchema = defineEntity({
  name: 'WebhookOutbox',
  tableName: 'webhook_outbox',
  properties: {
    seq: p.bigint('number').primary().autoincrement(),
    eventId: p.uuid().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    type: p.string().length(64),
    /** Orders deliveries: events of one resource go out one after the other. */
    resourceKey: p.string().length(300),
    /** The REST path of the resource, e.g. /services/roadside/v1/rescue/reqId/123. */
    resourcePath: p.string().length(500),
    resource: p.json<Record<string, unknown>>(),
    occurredAt: p.datetime().onCreate(() => new Date()),
    /** Recorded for a sandbox organisation (docs/sandbox.md): its webhook payloads say `"sandbox": true`. */
    sandbox: p.boolean().default(false),
  },
});

/** The migration that adds `sandbox` to an area's outbox, and its reverse. */
export const addOutboxSandbox = (area: string) => [`alter table "${area}"."webhook_outbox" add column "sandbox" boolean not null default false;`];
export const dropOutboxSandbox = (area: string) => [`alter table "${area}"."webhook_outbox" drop column "sandbox";`];

export class WebhookOutbox extends WebhookOutboxSchema.class {}
WebhookOutboxSchema.setClass(WebhookOutbox);

export interface OutboxEvent {
  type: EventType;
  /** Stable id of the resource within the source, e.g. `rescue:<reqId>`. */
  resourceKey: string;
  resourcePath: string;
  /** The resource as its REST path returns it (never MVR contents or dates of birth). */
  resource: Record<string, unknown>;
}

/**
 * Records an event in the outbox of `em`'s subgraph. It is written by the next flush of `em`, so
 * pass the transaction's EntityManager: the event exists exactly when the change does.
 */
export function recordEvent(em: EntityManager, event: OutboxEvent): void {
  const row = em.create(WebhookOutbox, { ...event, sandbox: inSandbox(em) } as never);
  watchCommits(em.getEventManager());
  const rows = pending.get(em);
  if (rows) rows.push(row);
  else pending.set(em, [row]);
}

/** Outbox rows as a commit wrote them (seq, id and timestamps filled in), with the schema of their outbox. */
export interface CommittedEvents { source: string; rows: WebhookOutbox[] }

/**
 * Tells listeners in this process which events were committed: the area's relay publishes them at
 * once instead of at its next poll (polling alone still publishes everything, e.g. from another process).
 */
const committed = new EventEmitter();
/** The rows recorded on each EntityManager since its last commit or rollback. */
const pending = new WeakMap<EntityManager, WebhookOutbox[]>();
const watched = new WeakSet<EventManager>();

class OutboxCommitSubscriber implements EventSubscriber {
  afterTransactionCommit(args: TransactionEventArgs) {
    const rows = pending.get(args.em);
    if (!rows) return;
    pending.delete(args.em);
    committed.emit('commit', { source: args.em.config.get('schema'), rows } satisfies CommittedEvents);
  }

  afterTransactionRollback(args: TransactionEventArgs) {
    pending.delete(args.em);
  }
}

function watchCommits(events: EventManager) {
  if (watched.has(events)) return;
  watched.add(events);
  events.registerSubscriber(new OutboxCommitSubscriber());
}

/** Calls `listener` after each commit, in this process, that wrote outbox events; returns the unsubscribe. */
export function onEventsCommitted(listener: (events: CommittedEvents) => void): () => void {
  committed.on('commit', listener);
  return () => committed.off('commit', listener);
}
