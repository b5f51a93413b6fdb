import { EVENT_TYPES, parseEventTypes } from '../events.ts';
import { badInput } from '../platform/errors.ts';
import { arrayOf, bool, dateTime, int, str } from '../platform/rest/components.ts';
import { defined, queryString } from '../platform/rest/body.ts';
import { found, typedRoute } from '../platform/rest/operation.ts';
import type { JsonSchema, RestRequest, RestRoute } from '../platform/rest/types.ts';
import { eventTypeToEnum } from '../platform/webhooks/events.ts';
import { WEBHOOKS_PREFIX } from './paths.ts';
import { WebhookEvent, WebhookEvents, type RestWebhookEventFragment } from './rest.generated.ts';
import { deliveredTypeFromEnum } from './types.ts';

const TAG = 'Webhooks';
const STATES = ['pending', 'failed', 'delivered'];

/** An event as REST spells it: its type as webhook bodies do. */
const restEvent = (e: RestWebhookEventFragment) => ({
  id: e.id,
  type: deliveredTypeFromEnum(e.type),
  occurredAt: e.occurredAt,
  resource: e.resource,
  data: e.data,
  deliveries: e.deliveries,
  ...(e.sandbox ? { sandbox: true as const } : {}),
});

function listVariables(req: RestRequest) {
  const type = queryString(req, 'type');
  const state = queryString(req, 'deliveryState');
  const first = queryString(req, 'first');
  if (first !== undefined && !/^\d{1,4}$/.test(first))
    throw badInput('first must be a whole number from 1 to 100', 'first');
  if (state !== undefined && !STATES.includes(state.toLowerCase())) {
    throw badInput(`deliveryState must be one of ${STATES.join(', ')}`, 'deliveryState');
  }
  const filter = defined({
    type: type === undefined ? undefined : eventTypeToEnum(parseEventTypes([type], 'type')[0]),
    resource: queryString(req, 'resource'),
    from: queryString(req, 'from'),
    to: queryString(req, 'to'),
    deliveryState: state?.toUpperCase(),
  });
  return defined({
    filter,
    first: first === undefined ? undefined : Number(first),
    after: queryString(req, 'after'),
  });
}

const eventSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'type', 'occurredAt', 'resource', 'data', 'deliveries'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'The `id` of the webhook bodies that carried it' },
    type: { type: 'string', enum: [...EVENT_TYPES] },
    occurredAt: dateTime,
    resource: { ...str, description: '`<kind>:<id>`, e.g. `rescue:<reqId>`' },
    data: {
      type: 'object',
      required: ['path', 'resource'],
      description: "The webhook body's `data`",
      properties: { path: str, resource: { type: 'object', additionalProperties: true } },
    },
    deliveries: {
      type: 'object',
      required: ['pending', 'failed', 'succeeded'],
      description: 'Its deliveries by state',
      properties: { pending: int, failed: int, succeeded: int },
    },
    sandbox: { ...bool, const: true, description: "Present, true, on a sandbox organisation's events only (docs/sandbox.md)" },
  },
};
const idsDoc =
  "Another organisation's id, an unknown one, or one past the history (EVENTS_HISTORY_DAYS) is 404.";

/** The event history's REST rows. */
export const eventRoutes: readonly RestRoute[] = [
  typedRoute(WebhookEvents, {
    method: 'GET',
    path: `${WEBHOOKS_PREFIX}/events`,
    operationId: 'listWebhookEvents',
    summary: "The organisation's events, newest first, with filters and cursor paging",
    tag: TAG,
    scope: 'any',
    variables: listVariables,
    result: ({ webhookEvents: { nodes, pageInfo } }) => ({
      events: nodes.map(restEvent),
      hasNextPage: pageInfo.hasNextPage,
      nextCursor: pageInfo.hasNextPage ? pageInfo.endCursor : null,
    }),
    docs: {
      description:
        'From the event history (kept EVENTS_HISTORY_DAYS, 30 by default). `deliveryState`: `pending` = some delivery ' +
        'not yet final, `failed` = some delivery failed finally, `delivered` = every delivery succeeded (and there was one).',
      query: {
        type: { type: 'string', enum: [...EVENT_TYPES], description: 'Only events of this type' },
        resource: {
          type: 'string',
          maxLength: 300,
          description: 'Only events about this resource, `<kind>:<id>`',
          example: 'rescue:5b0c7a9e-2f6d-4d7a-9a43-0c2b8d1e6f10',
        },
        from: { type: 'string', format: 'date-time', description: 'Events that occurred at or after', example: '2026-11-01T00:00:00Z' },
        to: { type: 'string', format: 'date-time', description: 'Events that occurred before', example: '2026-12-01T00:00:00Z' },
        deliveryState: { type: 'string', enum: STATES, description: 'Any case', example: 'failed' },
        first: {
          type: 'integer',
          minimum: 1,
          maximum: 100,
          description: 'Page size (default 20, at most 100)',
        },
        after: { type: 'string', description: 'nextCursor of the previous page', example: 'MjAyNi0xMS0yN1QxMjowMDowMFp8MTIz' },
      },
      response: {
        type: 'object',
        required: ['events', 'hasNextPage', 'nextCursor'],
        properties: {
          events: arrayOf(eventSchema),
          hasNextPage: bool,
          nextCursor: { type: ['string', 'null'] },
        },
      },
    },
  }),
  typedRoute(WebhookEvent, {
    method: 'GET',
    path: `${WEBHOOKS_PREFIX}/events/:id`,
    operationId: 'getWebhookEvent',
    summary: 'One event and its deliveries by state',
    tag: TAG,
    scope: 'any',
    variables: (req) => ({ id: req.params.id }),
    result: (d, req) => restEvent(found(d.webhookEvent, 'Webhook event', req.params.id)),
    docs: { description: idsDoc, response: eventSchema },
  }),
];
