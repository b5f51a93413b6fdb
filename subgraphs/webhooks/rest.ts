import { badInput, notFound } from '../platform/errors.ts';
import { EVENT_TYPES, parseEventTypes } from '../events.ts';
import { eventTypeToEnum } from '../platform/webhooks/events.ts';
import { closedBody, defined, objectBody, pick, queryString } from '../platform/rest/body.ts';
import { found, typedRoute } from '../platform/rest/operation.ts';
import type { JsonSchema, RestRequest, RestRoute } from '../platform/rest/types.ts';
import {
  CreateWebhookSubscription, DeleteWebhookSubscription, RecoverWebhookDeliveries, ResetSandbox, RetryWebhookDelivery,
  RotateWebhookSecret, SendTestWebhook, UpdateWebhookSubscription, WebhookDeliveries, WebhookDelivery,
  WebhookSubscription, WebhookSubscriptions, type RestWebhookDeliveryFragment, type RestWebhookSubscriptionFragment,
} from './rest.generated.ts';
import { WEBHOOKS_PREFIX } from './paths.ts';
import { eventRoutes } from './rest-events.ts';
import { DELIVERED_TYPES, deliveredTypeFromEnum } from './types.ts';

/** Empties the caller's sandbox (docs/sandbox.md). */
export const SANDBOX_RESET_PATH = '/platform/sandbox/v1/reset';
const TAG = 'Webhooks';

/** Event types as REST spells them (`rescue.status_changed`), as the GraphQL enum's values. */
const eventTypesOf = (value: unknown) => parseEventTypes(value).map(eventTypeToEnum);

function createVariables(req: RestRequest) {
  const body = objectBody(req);
  return { input: defined({ url: pick(body, 'url'), eventTypes: eventTypesOf(pick(body, 'eventTypes')), description: pick(body, 'description') }) };
}

/** A subscription: its event types as REST spells them. */
const restSubscription = (s: RestWebhookSubscriptionFragment) => ({
  id: s.id, url: s.url, eventTypes: s.eventTypes.map(deliveredTypeFromEnum), description: s.description,
  createdAt: s.createdAt, pausedUntil: s.pausedUntil, paused: s.paused, previousSecretExpiresAt: s.previousSecretExpiresAt,
});

/** A delivery: its event type as REST spells it. */
const restDelivery = (d: RestWebhookDeliveryFragment) => ({
  id: d.id, subscriptionId: d.subscriptionId, eventId: d.eventId, eventType: deliveredTypeFromEnum(d.eventType),
  status: d.status, attempts: d.attempts, nextAttemptAt: d.nextAttemptAt, lastResponseStatus: d.lastResponseStatus,
  lastError: d.lastError, deliveredAt: d.deliveredAt, createdAt: d.createdAt, payload: d.payload,
  attemptLog: d.attemptLog,
});


function deliveriesVariables(req: RestRequest) {
  const status = queryString(req, 'status');
  const first = queryString(req, 'first');
  if (first !== undefined && !/^\d{1,4}$/.test(first)) throw badInput('first must be a whole number from 1 to 100', 'first');
  return defined({ subscriptionId: req.params.id, status: status?.toUpperCase(), first: first === undefined ? undefined : Number(first) });
}

function patchVariables(req: RestRequest) {
  const body = objectBody(req);
  const eventTypes = pick(body, 'eventTypes');
  return {
    id: req.params.id,
    input: defined({ url: pick(body, 'url'), eventTypes: eventTypes === undefined ? undefined : eventTypesOf(eventTypes), paused: pick(body, 'paused') }),
  };
}

function rotateVariables(req: RestRequest) {
  const overlapSeconds = pick(objectBody(req), 'overlapSeconds');
  if (overlapSeconds !== undefined && !Number.isInteger(overlapSeconds)) {
    throw badInput('overlapSeconds must be a whole number of seconds from 0 to 604800', 'overlapSeconds');
  }
  return defined({ id: req.params.id, overlapSeconds });
}

function recoverVariables(req: RestRequest) {
  const since = pick(objectBody(req), 'since');
  if (typeof since !== 'string') throw badInput('since must be an ISO 8601 instant', 'since');
  return { id: req.params.id, since };
}

// ---- documentation -----------------------------------------------------------------------------

const eventTypesSchema: JsonSchema = { type: 'array', minItems: 1, items: { type: 'string', enum: [...EVENT_TYPES] } };
const subscriptionRequired = ['id', 'url', 'eventTypes', 'createdAt', 'paused'];
const subscriptionProperties: JsonSchema = {
  id: { type: 'string', format: 'uuid' }, url: { type: 'string', format: 'uri' }, eventTypes: eventTypesSchema,
  description: { type: ['string', 'null'] }, createdAt: { type: 'string', format: 'date-time' },
  pausedUntil: {
    type: ['string', 'null'], format: 'date-time',
    description: 'Set while the receiver keeps failing (circuit breaker): deliveries wait until then, then go one at a time',
  },
  paused: { type: 'boolean', description: 'Paused by the partner (PATCH): deliveries are recorded and wait, in order' },
  previousSecretExpiresAt: {
    type: ['string', 'null'], format: 'date-time',
    description: 'During a rotation\'s overlap, when the previous secret stops signing; null otherwise',
  },
};
const subscriptionSchema: JsonSchema = {
  type: 'object', required: subscriptionRequired, properties: subscriptionProperties,
};
const deliverySchema: JsonSchema = {
  type: 'object', required: ['id', 'subscriptionId', 'eventId', 'eventType', 'status', 'attempts', 'payload', 'attemptLog'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'Also the `webhook-id` header of every attempt' },
    subscriptionId: { type: 'string', format: 'uuid' }, eventId: { type: 'string', format: 'uuid' },
    eventType: { type: 'string', enum: [...DELIVERED_TYPES] }, status: { type: 'string', enum: ['PENDING', 'SUCCEEDED', 'FAILED'] },
    attempts: { type: 'integer' }, nextAttemptAt: { type: ['string', 'null'], format: 'date-time' },
    lastResponseStatus: { type: ['integer', 'null'] }, lastError: { type: ['string', 'null'] },
    deliveredAt: { type: ['string', 'null'], format: 'date-time' }, createdAt: { type: 'string', format: 'date-time' },
    payload: {
      type: 'object', description: 'The body sent (Standard Webhooks)', required: ['id', 'type', 'timestamp', 'data'],
      properties: {
        id: { type: 'string', format: 'uuid', description: 'The event id' }, type: { type: 'string', enum: [...DELIVERED_TYPES] }, timestamp: { type: 'string', format: 'date-time' },
        sandbox: { type: 'boolean', const: true, description: 'Present, true, on a sandbox organisation\'s events only (docs/sandbox.md)' },
        data: {
          type: 'object', required: ['path', 'resource'],
          properties: {
            path: { type: 'string', description: 'The REST path of the resource' },
            resource: { type: 'object', additionalProperties: true, description: 'The resource as its REST path answers it (see that operation\'s schema)' },
          },
        },
      },
    },
    attemptLog: { type: 'array', items: { type: 'object', properties: { at: { type: 'string', format: 'date-time' }, responseStatus: { type: ['integer', 'null'] }, error: { type: ['string', 'null'] }, durationMs: { type: 'integer' } } } },
  },
};
const idsDoc = 'Another organisation\'s id, or one that does not exist, is 404.';

// ---- the table ---------------------------------------------------------------------------------

export const webhookRoutes: readonly RestRoute[] = [
  typedRoute(CreateWebhookSubscription, {
    method: 'POST', path: `${WEBHOOKS_PREFIX}/subscriptions`, operationId: 'createWebhookSubscription',
    summary: 'Subscribe a receiver URL to events of the caller\'s organisation; the signing secret is returned this once',
    tag: TAG, scope: 'any', status: 201,
    variables: createVariables,
    result: ({ createWebhookSubscription: { subscription, secret } }) => ({
      ...restSubscription(subscription), secret,
    }),
    docs: {
      description: 'Any client of the organisation may subscribe, whatever its scopes. `url`: https; a host that is or resolves to a private, link-local, '
        + 'loopback or other non-public address is refused (400); loopback (and plain http to it) only where the deployment sets WEBHOOK_ALLOW_LOOPBACK=true. Deliveries follow the Standard Webhooks specification; see docs/webhooks.md. '
        + 'At most 25 subscriptions per organisation (409).',
      requestBody: closedBody({ type: 'object', required: ['url', 'eventTypes'], properties: { url: { type: 'string', format: 'uri', maxLength: 2048 }, eventTypes: eventTypesSchema, description: { type: 'string', maxLength: 255 } } }),
      requestExample: { url: 'https://partner.example.com/hooks/fleet', eventTypes: ['rescue.status_changed', 'rescue.cancelled'], description: 'Dispatch board' },
      response: {
        ...subscriptionSchema, required: [...subscriptionRequired, 'secret'],
        properties: { ...subscriptionProperties, secret: { type: 'string', description: 'whsec_...; shown once' } },
      },
    },
  }),
  typedRoute(WebhookSubscriptions, {
    method: 'GET', path: `${WEBHOOKS_PREFIX}/subscriptions`, operationId: 'listWebhookSubscriptions', summary: 'The organisation\'s subscriptions, newest first',
    tag: TAG, scope: 'any',
    variables: () => ({}), result: (d) => ({ subscriptions: d.webhookSubscriptions.map(restSubscription) }),
    docs: { response: { type: 'object', required: ['subscriptions'], properties: { subscriptions: { type: 'array', items: subscriptionSchema } } } },
  }),
  typedRoute(WebhookSubscription, {
    method: 'GET', path: `${WEBHOOKS_PREFIX}/subscriptions/:id`, operationId: 'getWebhookSubscription', summary: 'One subscription (without its secret)',
    tag: TAG, scope: 'any',
    variables: (req) => ({ id: req.params.id }), result: (d, req) => restSubscription(found(d.webhookSubscription, 'Webhook subscription', req.params.id)),
    docs: { description: idsDoc, response: subscriptionSchema },
  }),
  typedRoute(DeleteWebhookSubscription, {
    method: 'DELETE', path: `${WEBHOOKS_PREFIX}/subscriptions/:id`, operationId: 'deleteWebhookSubscription', summary: 'Remove a subscription and its delivery log',
    tag: TAG, scope: 'any', status: 204,
    variables: (req) => ({ id: req.params.id }),
    result: (d, req) => {
      if (!d.deleteWebhookSubscription) throw notFound('Webhook subscription', req.params.id);
      return null;
    },
    docs: { description: `Pending deliveries are dropped. ${idsDoc}` },
  }),
  typedRoute(WebhookDeliveries, {
    method: 'GET', path: `${WEBHOOKS_PREFIX}/subscriptions/:id/deliveries`, operationId: 'listWebhookDeliveries', summary: 'The delivery log of a subscription, newest first',
    tag: TAG, scope: 'any',
    variables: deliveriesVariables,
    result: (d, req) => ({
      deliveries: found(d.webhookDeliveries, 'Webhook subscription', req.params.id).map(restDelivery),
    }),
    docs: {
      description: idsDoc,
      query: {
        status: { type: 'string', enum: ['pending', 'succeeded', 'failed'], description: 'Any case' },
        first: { type: 'integer', minimum: 1, maximum: 100, description: 'How many (default 50)' },
      },
      response: { type: 'object', required: ['deliveries'], properties: { deliveries: { type: 'array', items: deliverySchema } } },
    },
  }),
  typedRoute(WebhookDelivery, {
    method: 'GET', path: `${WEBHOOKS_PREFIX}/subscriptions/:id/deliveries/:deliveryId`, operationId: 'getWebhookDelivery', summary: 'One delivery and its attempts',
    tag: TAG, scope: 'any',
    variables: (req) => ({ subscriptionId: req.params.id, deliveryId: req.params.deliveryId }),
    result: (d, req) => restDelivery(found(d.webhookDelivery, 'Webhook delivery', req.params.deliveryId)),
    docs: { description: idsDoc, response: deliverySchema },
  }),
  typedRoute(RetryWebhookDelivery, {
    method: 'POST', path: `${WEBHOOKS_PREFIX}/subscriptions/:id/deliveries/:deliveryId/retry`, operationId: 'retryWebhookDelivery',
    summary: 'Send a FAILED delivery again (or replay a SUCCEEDED one), with a fresh set of retries',
    tag: TAG, scope: 'any', status: 202,
    variables: (req) => ({ subscriptionId: req.params.id, deliveryId: req.params.deliveryId }),
    result: (d) => restDelivery(d.retryWebhookDelivery),
    docs: { description: `No body. A PENDING delivery is 409 (it is already scheduled). ${idsDoc}`, response: deliverySchema },
  }),
  typedRoute(ResetSandbox, {
    method: 'POST', path: SANDBOX_RESET_PATH, operationId: 'resetSandbox',
    summary: 'Empty the caller\'s sandbox: every record of its sandbox organisation, in every area',
    tag: 'Sandbox', scope: 'any',
    variables: () => ({}),
    result: ({ resetSandbox: { booking, scoring, roadside, registration, webhooks } }) => ({ deleted: { booking, scoring, roadside, registration, webhooks } }),
    docs: {
      description: 'No body. Only a sandbox client\'s token (`npm run clients -- create --sandbox`; 403 otherwise); its live organisation '
        + 'is never touched. Each area empties its part in a transaction of its own. See docs/sandbox.md.',
      response: {
        type: 'object', required: ['deleted'],
        properties: {
          deleted: {
            type: 'object', description: 'Records deleted, per area', required: ['booking', 'scoring', 'roadside', 'registration', 'webhooks'],
            properties: Object.fromEntries(['booking', 'scoring', 'roadside', 'registration', 'webhooks'].map((area) => [area, { type: 'integer', minimum: 0 }])),
          },
        },
      },
    },
  }),
  typedRoute(UpdateWebhookSubscription, {
    method: 'PATCH', path: `${WEBHOOKS_PREFIX}/subscriptions/:id`, operationId: 'updateWebhookSubscription',
    summary: 'Change a subscription\'s URL, event types or pause (its secret stays)',
    tag: TAG, scope: 'any',
    variables: patchVariables,
    result: (d) => restSubscription(d.updateWebhookSubscription),
    docs: {
      description: 'Members left out stay as they are. A new `url` follows the rules of a new subscription (400). '
        + '`paused: true` holds its deliveries (recorded, waiting in order); `false` lets them go. '
        + `A new URL closes the circuit breaker. ${idsDoc}`,
      requestBody: closedBody({
        type: 'object', minProperties: 1,
        properties: { url: { type: 'string', format: 'uri', maxLength: 2048 }, eventTypes: eventTypesSchema, paused: { type: 'boolean' } },
      }),
      requestExample: { eventTypes: ['rescue.status_changed'], paused: false },
      response: subscriptionSchema,
    },
  }),
  typedRoute(RotateWebhookSecret, {
    method: 'POST', path: `${WEBHOOKS_PREFIX}/subscriptions/:id/rotate-secret`, operationId: 'rotateWebhookSecret',
    summary: 'Give a subscription a new signing secret, returned this once; the old one keeps signing during the overlap',
    tag: TAG, scope: 'any',
    variables: rotateVariables,
    result: ({ rotateWebhookSecret: { subscription, secret } }) => ({ ...restSubscription(subscription), secret }),
    docs: {
      description: 'For `overlapSeconds` (default 86400, 0 to 604800) every delivery carries two signatures, '
        + '`webhook-signature: v1,<new> v1,<old>`, so receivers verify with either secret. A rotation during an overlap ends the '
        + `older secret (at most two at once). The answer is never kept for an Idempotency-Key. ${idsDoc}`,
      requestBody: closedBody({
        type: 'object', properties: { overlapSeconds: { type: 'integer', minimum: 0, maximum: 604800, default: 86400 } },
      }),
      requestExample: { overlapSeconds: 86400 },
      response: {
        ...subscriptionSchema, required: [...subscriptionRequired, 'secret'],
        properties: { ...subscriptionProperties, secret: { type: 'string', description: 'The new whsec_...; shown once' } },
      },
    },
  }),
  typedRoute(SendTestWebhook, {
    method: 'POST', path: `${WEBHOOKS_PREFIX}/subscriptions/:id/test`, operationId: 'sendTestWebhook',
    summary: 'Send a webhook.test event to this subscription only',
    tag: TAG, scope: 'any', status: 202,
    variables: (req) => ({ id: req.params.id }),
    result: (d) => restDelivery(d.sendTestWebhook),
    docs: {
      description: 'No body. The delivery goes as any other (signed, retried, logged; it waits while the subscription is paused); '
        + `its event is not in the event history. ${idsDoc}`,
      response: deliverySchema,
    },
  }),
  typedRoute(RecoverWebhookDeliveries, {
    method: 'POST', path: `${WEBHOOKS_PREFIX}/subscriptions/:id/recover`, operationId: 'recoverWebhookDeliveries',
    summary: 'Send again every FAILED delivery since an instant (at most 10,000 a call)',
    tag: TAG, scope: 'any', status: 202,
    variables: recoverVariables,
    result: (d) => d.recoverWebhookDeliveries,
    docs: {
      description: 'The subscription\'s FAILED deliveries created at or after `since` go back to PENDING with a fresh set of retries, '
        + 'oldest first, at most 10,000 a call (`more`: call again); they go in order per resource and within the organisation\'s '
        + `and the subscription's concurrency bounds. ${idsDoc}`,
      requestBody: closedBody({ type: 'object', required: ['since'], properties: { since: { type: 'string', format: 'date-time' } } }),
      requestExample: { since: '2026-11-20T00:00:00Z' },
      response: {
        type: 'object', required: ['recovered', 'more'],
        properties: { recovered: { type: 'integer', minimum: 0, maximum: 10000 }, more: { type: 'boolean' } },
      },
    },
  }),
  ...eventRoutes,
];
