import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError, badInput, conflict, notFound } from '../platform/errors.ts';
import { parseEventTypes, type EventType } from '../events.ts';
import { tenantOf } from '../platform/db/rows.ts';
import { parsePublicUrl, resolvePublicUrl, type AddressPolicy } from '../platform/public-address.ts';
import { DELIVERIES, SUBSCRIPTIONS } from './deliver.ts';
import { webhookPayload } from './enqueue.ts';
import { WebhookDelivery, WebhookSubscription, type DeliveryStatus } from './entities.ts';
import { WEBHOOKS_PREFIX } from './paths.ts';
import { TEST_EVENT } from './types.ts';

/** Bounds what one organisation can make the worker do. */
export const MAX_SUBSCRIPTIONS_PER_ORG = 25;
export const MAX_DELIVERIES_PAGE = 100;

/** A rotation's overlap: the default, and the most (7 days). */
export const DEFAULT_OVERLAP_SECONDS = 86_400;
export const MAX_OVERLAP_SECONDS = 7 * 86_400;
/** FAILED deliveries one recover call queues at most. */
export const MAX_RECOVERED = 10_000;

export interface SubscriptionInput { url: unknown; eventTypes: unknown; description?: unknown }
export interface SubscriptionPatch { url?: unknown; eventTypes?: unknown; paused?: unknown }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids are UUIDs; anything else names nothing (and never reaches the database as a bad cast). */
const isId = (id: string) => UUID.test(id);

/** A new Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The receiver policy of each database (`WEBHOOK_ALLOW_LOOPBACK`): registered when the subgraph
 * starts and found again from any EntityManager forked from it.
 */
const policies = new WeakMap<object, AddressPolicy>();
export const registerReceiverPolicy = (em: { config: object }, policy: AddressPolicy) => { policies.set(em.config, policy); };
/** Nothing registered (a service built outside a subgraph) is the default configuration: public receivers only. */
const policyFor = (em: { config: object }): AddressPolicy => policies.get(em.config) ?? { allowLoopback: false };

/** Subscriptions and their delivery log, within the EntityManager's organisation (the tenant filter). */
export class WebhookService {
  private readonly em: EntityManager;
  private readonly policy: AddressPolicy;

  constructor(em: EntityManager) {
    this.em = em;
    this.policy = policyFor(em);
  }

  async subscribe(input: SubscriptionInput): Promise<{ subscription: WebhookSubscription; secret: string }> {
    const url = parsePublicUrl(input.url, this.policy);
    const eventTypes = this.eventTypes(input.eventTypes);
    if (input.description != null && (typeof input.description !== 'string' || input.description.length > 255)) {
      throw badInput('description must be a string of at most 255 characters', 'description');
    }
    if (await this.em.count(WebhookSubscription, {}) >= MAX_SUBSCRIPTIONS_PER_ORG) {
      throw conflict(`An organisation has at most ${MAX_SUBSCRIPTIONS_PER_ORG} subscriptions; delete one first`);
    }
    await resolvePublicUrl(url, this.policy);
    const secret = newSecret();
    const subscription = this.em.create(WebhookSubscription, {
      url: url.toString(), eventTypes, description: (input.description as string | undefined) ?? null, secret,
    } as never);
    await this.em.flush();
    return { subscription, secret };
  }

  private eventTypes(value: unknown): EventType[] {
    return [...new Set(parseEventTypes(value))];
  }

  list(): Promise<WebhookSubscription[]> {
    return this.em.find(WebhookSubscription, {}, { orderBy: { createdAt: 'desc', id: 'asc' } });
  }

  async find(id: string): Promise<WebhookSubscription | null> {
    return isId(id) ? this.em.findOne(WebhookSubscription, { id }) : null;
  }

  async get(id: string): Promise<WebhookSubscription> {
    const subscription = await this.find(id);
    if (!subscription) throw notFound('Webhook subscription', id);
    return subscription;
  }

  /** Removes the subscription and its deliveries (pending ones are not sent). */
  async delete(id: string): Promise<boolean> {
    const subscription = await this.find(id);
    if (!subscription) return false;
    await this.em.transactional(async (tx) => {
      await tx.nativeDelete(WebhookDelivery, { subscriptionId: subscription.id });
      await tx.nativeDelete(WebhookSubscription, { id: subscription.id });
    });
    return true;
  }

  /** The delivery log of a subscription, newest first; null for an unknown subscription. */
  async deliveries(subscriptionId: string, status?: DeliveryStatus | null, first = 50): Promise<WebhookDelivery[] | null> {
    if (!Number.isInteger(first) || first < 1 || first > MAX_DELIVERIES_PAGE) throw badInput(`first must be from 1 to ${MAX_DELIVERIES_PAGE}`, 'first');
    if (!await this.find(subscriptionId)) return null;
    return this.em.find(WebhookDelivery, { subscriptionId, ...(status ? { status } : {}) }, {
      orderBy: { createdAt: 'desc', sourceSeq: 'desc', id: 'asc' }, limit: first,
    });
  }

  async delivery(subscriptionId: string, deliveryId: string): Promise<WebhookDelivery | null> {
    if (!isId(subscriptionId) || !isId(deliveryId)) return null;
    return this.em.findOne(WebhookDelivery, { id: deliveryId, subscriptionId });
  }

  /** Queues a finished delivery (FAILED, or SUCCEEDED to replay it) for an attempt now, with a fresh set of retries. */
  async retry(subscriptionId: string, deliveryId: string): Promise<WebhookDelivery> {
    const delivery = await this.delivery(subscriptionId, deliveryId);
    if (!delivery) throw notFound('Webhook delivery', deliveryId);
    const changed = await this.em.nativeUpdate(WebhookDelivery, { id: delivery.id, status: { $ne: 'PENDING' } }, {
      status: 'PENDING', attempts: 0, nextAttemptAt: new Date(), lockedUntil: null,
    });
    if (changed !== 1) throw new AppError('CONFLICT', 'The delivery is still pending; it will be attempted as scheduled', { field: 'deliveryId' });
    await this.em.refresh(delivery);
    return delivery;
  }

  /**
   * Changes what is given of the URL (the receivers' rules, resolved again), the event types and the
   * partner's pause. A new URL starts with a closed breaker: the old receiver's failures are not its own.
   */
  async update(id: string, patch: SubscriptionPatch): Promise<WebhookSubscription> {
    const subscription = await this.get(id);
    if (!Object.values(patch).some((value) => value !== undefined)) throw badInput('give url, eventTypes or paused to change', 'input');
    for (const field of ['url', 'eventTypes', 'paused'] as const) {
      if (field in patch && patch[field] === null) throw badInput(`${field} may be omitted but not null`, field);
    }
    if (patch.paused !== undefined && typeof patch.paused !== 'boolean') throw badInput('paused must be true or false', 'paused');
    const eventTypes = patch.eventTypes === undefined ? undefined : this.eventTypes(patch.eventTypes);
    if (patch.url !== undefined) {
      const url = parsePublicUrl(patch.url, this.policy);
      await resolvePublicUrl(url, this.policy);
      if (url.toString() !== subscription.url) {
        Object.assign(subscription, { url: url.toString(), consecutiveFailures: 0, pausedUntil: null });
      }
    }
    if (eventTypes) subscription.eventTypes = eventTypes;
    if (patch.paused !== undefined) subscription.paused = patch.paused;
    await this.em.flush();
    return subscription;
  }

  /**
   * A new secret, in one statement (two rotations at once each keep a secret that existed): the
   * current one keeps signing for `overlapSeconds` beside it, replacing any older one still in its
   * overlap, so at most two sign at once; 0 ends the current one now.
   */
  async rotate(id: string, overlapSeconds = DEFAULT_OVERLAP_SECONDS): Promise<{ subscription: WebhookSubscription; secret: string }> {
    if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_OVERLAP_SECONDS) {
      throw badInput(`overlapSeconds must be a whole number from 0 to ${MAX_OVERLAP_SECONDS} (7 days)`, 'overlapSeconds');
    }
    const subscription = await this.get(id);
    const secret = newSecret();
    await this.sql(`update ${SUBSCRIPTIONS} set previous_secret = case when ? > 0 then secret end,
        previous_secret_until = case when ? > 0 then now() + (? * interval '1 second') end, secret = ?
      where id = ? and org_id = ?`, [overlapSeconds, overlapSeconds, overlapSeconds, secret, subscription.id, tenantOf(this.em)]);
    await this.em.refresh(subscription);
    return { subscription, secret };
  }

  /** Queues a `webhook.test` event for this subscription only: a delivery like any other, signed and logged. */
  async sendTest(id: string): Promise<WebhookDelivery> {
    const subscription = await this.get(id);
    const eventId = crypto.randomUUID();
    const occurredAt = new Date();
    const path = `${WEBHOOKS_PREFIX}/subscriptions/${subscription.id}`;
    const payload = webhookPayload({
      eventId, source: 'webhooks', seq: 0, orgId: subscription.orgId, type: TEST_EVENT, resourceKey: `subscription:${subscription.id}`,
      resourcePath: path, resource: { subscriptionId: subscription.id, url: subscription.url }, occurredAt: occurredAt.toISOString(),
    });
    const delivery = this.em.create(WebhookDelivery, {
      subscriptionId: subscription.id, eventId, eventType: TEST_EVENT, resourceKey: `webhooks:test:${eventId}`, sourceSeq: 0, payload,
      status: 'PENDING', attempts: 0, nextAttemptAt: occurredAt, attemptLog: [],
    } as never);
    await this.em.flush();
    return delivery;
  }

  /**
   * Queues again the subscription's FAILED deliveries created at or after `since`, oldest first, at
   * most MAX_RECOVERED, each with a fresh set of retries; the worker's claim keeps them in order per
   * resource and within the organisation's and the subscription's bounds.
   */
  async recover(id: string, since: Date): Promise<{ recovered: number; more: boolean }> {
    if (!(since instanceof Date) || Number.isNaN(since.getTime())) throw badInput('since must be an ISO 8601 instant', 'since');
    if (since > new Date()) throw badInput('since must not be in the future', 'since');
    const subscription = await this.get(id);
    const failed = `${DELIVERIES} where org_id = ? and subscription_id = ? and status = 'FAILED' and created_at >= ?::timestamptz`;
    const scope = [tenantOf(this.em), subscription.id, since.toISOString()];
    const recovered = await this.sql(`with picked as (select id from ${failed} order by created_at, source_seq limit ?)
      update ${DELIVERIES} d set status = 'PENDING', attempts = 0, next_attempt_at = now(), locked_until = null
      from picked where d.id = picked.id and d.status = 'FAILED' returning d.id`, [...scope, MAX_RECOVERED]);
    const [rest] = await this.sql(`select exists (select 1 from ${failed}) as more`, scope);
    return { recovered: recovered.length, more: Boolean(rest?.more) };
  }

  private sql(statement: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    return (this.em as SqlEntityManager).getConnection().execute(statement, params, 'all');
  }
}
