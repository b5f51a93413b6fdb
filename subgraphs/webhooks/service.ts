import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { AppError, badInput, conflict, notFound } from '../platform/errors.ts';
import { parseEventTypes, type EventType } from '../events.ts';
import { parsePublicUrl, resolvePublicUrl, type AddressPolicy } from '../platform/public-address.ts';
import { WebhookDelivery, WebhookSubscription, type DeliveryStatus } from './entities.ts';

/** Bounds what one organisation can make the worker do. */
export const MAX_SUBSCRIPTIONS_PER_ORG = 25;
export const MAX_DELIVERIES_PAGE = 100;

export interface SubscriptionInput { url: unknown; eventTypes: unknown; description?: unknown }

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
}
