import type { SubgraphContext } from '../platform/context.ts';
import { unauthenticated } from '../platform/errors.ts';
import { eventTypeToEnum } from '../platform/webhooks/events.ts';
import type { DeliveryStatus, WebhookDelivery, WebhookSubscription } from './entities.ts';
import { DEFAULT_EVENTS_PAGE, findEvent, listEvents, type EventFilter, type ListedEvent } from './event-list.ts';
import { WebhookService } from './service.ts';
import { emptySandbox } from '../platform/db/sandbox-reset.ts';
import { deliveredTypeFromEnum, subscribableFromEnum } from './types.ts';

type Ctx = SubgraphContext;

/** Any authenticated client of the organisation may manage its webhooks, whatever its scopes. */
function service(ctx: Ctx): WebhookService {
  if (ctx.authError) throw ctx.authError;
  if (!ctx.caller) throw unauthenticated();
  return new WebhookService(ctx.em);
}

const authenticated = (ctx: Ctx) => {
  service(ctx);
  return ctx.em;
};

interface PatchArgs { id: string; input: { url?: string | null; eventTypes?: string[] | null; paused?: boolean | null } }
/** The filter as GraphQL parses it: its instants are ISO strings (the DateTime scalar). */
type FilterArg = Omit<EventFilter, 'from' | 'to'> & { from?: string | null; to?: string | null };
interface EventsArgs { filter?: FilterArg | null; first?: number | null; after?: string | null }
const instant = (value?: string | null) => (value ? new Date(value) : null);

const sent = <T>(entry: { status: number | null } & T) => ({ ...entry, responseStatus: entry.status });

export const resolvers = {
  Query: {
    webhookSubscriptions: (_: unknown, __: unknown, ctx: Ctx) => service(ctx).list(),
    webhookSubscription: (_: unknown, a: { id: string }, ctx: Ctx) => service(ctx).find(a.id),
    webhookDeliveries: (_: unknown, a: { subscriptionId: string; status?: DeliveryStatus | null; first?: number | null }, ctx: Ctx) =>
      service(ctx).deliveries(a.subscriptionId, a.status, a.first ?? undefined),
    webhookDelivery: (_: unknown, a: { subscriptionId: string; deliveryId: string }, ctx: Ctx) => service(ctx).delivery(a.subscriptionId, a.deliveryId),
    webhookEvents: (_: unknown, { filter, first, after }: EventsArgs, ctx: Ctx) => listEvents(authenticated(ctx), {
      ...filter, type: filter?.type ? deliveredTypeFromEnum(filter.type) : null, from: instant(filter?.from), to: instant(filter?.to),
    }, first ?? DEFAULT_EVENTS_PAGE, after),
    webhookEvent: (_: unknown, a: { id: string }, ctx: Ctx) => findEvent(authenticated(ctx), a.id),
  },
  Mutation: {
    createWebhookSubscription: (_: unknown, a: { input: { url: string; eventTypes: string[]; description?: string | null } }, ctx: Ctx) =>
      service(ctx).subscribe({ ...a.input, eventTypes: a.input.eventTypes.map((type) => subscribableFromEnum(type)) }),
    deleteWebhookSubscription: (_: unknown, a: { id: string }, ctx: Ctx) => service(ctx).delete(a.id),
    retryWebhookDelivery: (_: unknown, a: { subscriptionId: string; deliveryId: string }, ctx: Ctx) => service(ctx).retry(a.subscriptionId, a.deliveryId),
    resetSandbox: async (_: unknown, __: unknown, ctx: Ctx) => ({ id: crypto.randomUUID(), webhooks: await emptySandbox(ctx) }),
    updateWebhookSubscription: (_: unknown, { id, input }: PatchArgs, ctx: Ctx) => service(ctx).update(id, {
      ...input, ...(input.eventTypes ? { eventTypes: input.eventTypes.map((type) => subscribableFromEnum(type)) } : {}),
    }),
    rotateWebhookSecret: (_: unknown, a: { id: string; overlapSeconds?: number | null }, ctx: Ctx) =>
      service(ctx).rotate(a.id, a.overlapSeconds ?? undefined),
    sendTestWebhook: (_: unknown, a: { id: string }, ctx: Ctx) => service(ctx).sendTest(a.id),
    recoverWebhookDeliveries: (_: unknown, a: { id: string; since: string }, ctx: Ctx) => service(ctx).recover(a.id, new Date(a.since)),
  },
  WebhookSubscription: {
    eventTypes: (s: WebhookSubscription) => s.eventTypes.map(eventTypeToEnum),
    pausedUntil: (s: WebhookSubscription) => (s.pausedUntil && s.pausedUntil > new Date() ? s.pausedUntil : null),
    previousSecretExpiresAt: (s: WebhookSubscription) =>
      (s.previousSecretUntil && s.previousSecretUntil > new Date() ? s.previousSecretUntil : null),
  },
  WebhookEvent: {
    type: (e: ListedEvent) => eventTypeToEnum(e.type),
    // The caller sees only its own organisation's events: a sandbox token's are all its sandbox's.
    sandbox: (_: ListedEvent, __: unknown, ctx: Ctx) => ctx.caller?.sandbox === true,
  },
  WebhookDelivery: {
    eventType: (d: WebhookDelivery) => eventTypeToEnum(d.eventType),
    nextAttemptAt: (d: WebhookDelivery) => (d.status === 'PENDING' ? d.nextAttemptAt : null),
    payload: (d: WebhookDelivery) => JSON.parse(d.payload),
    attemptLog: (d: WebhookDelivery) => d.attemptLog.map(sent),
  },
};
