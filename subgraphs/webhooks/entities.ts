import { defineEntity, p } from '@mikro-orm/core';
import { tenantProperties } from '../platform/db/tenant.ts';

/** A partner's receiver: where to send which event types of its organisation, and the key that signs them. */
export const WebhookSubscriptionSchema = defineEntity({
  name: 'WebhookSubscription',
  tableName: 'webhook_subscriptions',
  indexes: [{ properties: ['orgId', 'createdAt'], name: 'webhook_subscriptions_org_created_index' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    url: p.string().length(2048),
    eventTypes: p.json<string[]>(),
    description: p.string().length(255).nullable(),
    /** Standard Webhooks secret (`whsec_...`); shown once, kept to sign every delivery. */
    secret: p.string().length(100).hidden(),
    /**
     * The secret a rotation replaced, still signing (beside `secret`) until `previousSecretUntil`: at
     * most two secrets at once.
     */
    previousSecret: p.string().length(100).nullable().hidden(),
    previousSecretUntil: p.datetime().nullable(),
    /** Paused by the partner: deliveries are recorded and wait, in order, until it is resumed. */
    paused: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
    /** Circuit breaker (shared by every worker process): failed attempts in a row, and the pause they earned. */
    consecutiveFailures: p.integer().default(0),
    pausedUntil: p.datetime().nullable(),
  },
});
export class WebhookSubscription extends WebhookSubscriptionSchema.class {}
WebhookSubscriptionSchema.setClass(WebhookSubscription);

export const DELIVERY_STATUSES = ['PENDING', 'SUCCEEDED', 'FAILED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface AttemptLogEntry { at: string; status: number | null; error: string | null; durationMs: number }

/**
 * One event for one subscription: the signed body, where its retries stand, and the log of its
 * attempts. (subscription, event) is unique, so relaying an event twice delivers it once.
 */
export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  uniques: [{ properties: ['subscriptionId', 'eventId'], name: 'webhook_deliveries_subscription_event_unique' }],
  indexes: [
    { properties: ['status', 'nextAttemptAt'], name: 'webhook_deliveries_due_index' },
    { properties: ['subscriptionId', 'resourceKey', 'sourceSeq'], name: 'webhook_deliveries_order_index' },
    { properties: ['orgId', 'subscriptionId', 'createdAt'], name: 'webhook_deliveries_log_index' },
    /** An event's deliveries (its delivery state in the events listing). */
    { properties: ['eventId', 'status'], name: 'webhook_deliveries_event_index' },
    /** The events with a delivery in a state (the listing's deliveryState filter), and recover's failed ones. */
    { properties: ['orgId', 'status', 'eventId'], name: 'webhook_deliveries_org_status_index' },
  ],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    subscriptionId: p.uuid(),
    eventId: p.uuid(),
    eventType: p.string().length(64),
    /** `<source>:<resource>`; with sourceSeq it orders the deliveries of one resource. */
    resourceKey: p.string().length(340),
    sourceSeq: p.bigint('number'),
    /** The exact JSON that is signed and sent, the same on every attempt. */
    payload: p.text(),
    status: p.enum(DELIVERY_STATUSES),
    attempts: p.integer().default(0),
    nextAttemptAt: p.datetime(),
    lockedUntil: p.datetime().nullable(),
    lastAttemptAt: p.datetime().nullable(),
    lastResponseStatus: p.integer().nullable(),
    lastError: p.text().nullable(),
    deliveredAt: p.datetime().nullable(),
    attemptLog: p.json<AttemptLogEntry[]>(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export class WebhookDelivery extends WebhookDeliverySchema.class {}
WebhookDeliverySchema.setClass(WebhookDelivery);

/**
 * The event history: every committed event once (the bus's `history` consumer writes it, idempotent by
 * id), kept EVENTS_HISTORY_DAYS. A resource key belongs to one area, so `seq` orders the events of one
 * resource in commit order: replay after an event reads its resource's rows past its `seq`; listings
 * page by (occurredAt, id), overall, per type or per resource.
 */
export const RecordedEventSchema = defineEntity({
  name: 'RecordedEvent',
  tableName: 'events',
  indexes: [
    { properties: ['orgId', 'occurredAt', 'id'], name: 'events_org_occurred_index' },
    { properties: ['orgId', 'resourceKey', 'seq'], name: 'events_org_resource_index' },
    { properties: ['orgId', 'type', 'occurredAt', 'id'], name: 'events_org_type_index' },
    { properties: ['orgId', 'resourceKey', 'occurredAt', 'id'], name: 'events_org_resource_time_index' },
    { properties: ['occurredAt'], name: 'events_occurred_index' },
  ],
  properties: {
    /** The event's id (its outbox row's, and the stream's message id). */
    id: p.uuid().primary(),
    /** The area whose outbox recorded it. */
    source: p.string().length(64),
    /** Its outbox sequence number within `source`. */
    seq: p.bigint('number'),
    ...tenantProperties,
    type: p.string().length(64),
    /** `<kind>:<id>` as the outbox writes it, e.g. `rescue:<reqId>`. */
    resourceKey: p.string().length(300),
    resourcePath: p.string().length(500),
    resource: p.json<Record<string, unknown>>(),
    occurredAt: p.datetime(),
    recordedAt: p.datetime().onCreate(() => new Date()),
  },
});
export class RecordedEvent extends RecordedEventSchema.class {}
RecordedEventSchema.setClass(RecordedEvent);
