import type { SubgraphContext } from '../platform/context.ts';
import { unauthenticated } from '../platform/errors.ts';
import { eventTypeFromEnum } from '../events.ts';
import { eventTypeToEnum } from '../platform/webhooks/events.ts';
import type { DeliveryStatus, WebhookDelivery, WebhookSubscription } from './entities.ts';
import { WebhookService } from './service.ts';
import { emptySandbox } from '../platform/db/sandbox-reset.ts';

type Ctx = SubgraphContext;

/** Any authenticated client of the organisation may manage its webhooks, whatever its scopes. */
function service(ctx: Ctx): WebhookService {
  if (ctx.authError) throw ctx.authError;
  if (!ctx.caller) throw unauthenticated();
  return new WebhookService(ctx.em);
}

const sent = <T>(entry: { status: number | null } & T) => ({ ...entry, responseStatus: entry.status });

export const resolvers = {
  Query: {
    webhookSubscriptions: (_: unknown, __: unknown, ctx: Ctx) => service(ctx).list(),
    webhookSubscription: (_: unknown, a: { id: string }, ctx: Ctx) => service(ctx).find(a.id),
    webhookDeliveries: (_: unknown, a: { subscriptionId: string; status?: DeliveryStatus | null; first?: number | null }, ctx: Ctx) =>
      service(ctx).deliveries(a.subscriptionId, a.status, a.first ?? undefined),
    webhookDelivery: (_: unknown, a: { subscriptionId: string; deliveryId: string }, ctx: Ctx) => service(ctx).delivery(a.subscriptionId, a.deliveryId),
  },
  Mutation: {
    createWebhookSubscription: (_: unknown, a: { input: { url: string; eventTypes: string[]; description?: string | null } }, ctx: Ctx) =>
      service(ctx).subscribe({ ...a.input, eventTypes: a.input.eventTypes.map(eventTypeFromEnum) }),
    deleteWebhookSubscription: (_: unknown, a: { id: string }, ctx: Ctx) => service(ctx).delete(a.id),
    retryWebhookDelivery: (_: unknown, a: { subscriptionId: string; deliveryId: string }, ctx: Ctx) => service(ctx).retry(a.subscriptionId, a.deliveryId),
    resetSandbox: async (_: unknown, __: unknown, ctx: Ctx) => ({ resetId: crypto.randomUUID(), webhooks: await emptySandbox(ctx) }),
  },
  WebhookSubscription: {
    eventTypes: (s: WebhookSubscription) => s.eventTypes.map(eventTypeToEnum),
    pausedUntil: (s: WebhookSubscription) => (s.pausedUntil && s.pausedUntil > new Date() ? s.pausedUntil : null),
  },
  WebhookDelivery: {
    eventType: (d: WebhookDelivery) => eventTypeToEnum(d.eventType),
    nextAttemptAt: (d: WebhookDelivery) => (d.status === 'PENDING' ? d.nextAttemptAt : null),
    payload: (d: WebhookDelivery) => JSON.parse(d.payload),
    attemptLog: (d: WebhookDelivery) => d.attemptLog.map(sent),
  },
};
