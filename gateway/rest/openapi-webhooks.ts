import type { JsonSchema, RestRoute, WebhookPayloadDoc } from '../../subgraphs/platform/rest/types.ts';
import { componentSchemas } from '../../subgraphs/platform/rest/components.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';

const REF = '#/components/schemas/';

/** A schema itself, following a reference to a component. */
function deref(schema: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const found = componentSchemas()[ref.slice(REF.length)];
  if (!found) throw new Error(`OpenAPI webhooks: no component ${ref}`);
  return found;
}

/** The resource as the REST read of `from` answers it: the member, its items, without what the event never carries. */
function fromRead(routes: readonly RestRoute[], from: NonNullable<WebhookPayloadDoc['from']>): JsonSchema {
  const route = routes.find((r) => r.method === 'GET' && r.operationId === from.operationId);
  if (!route?.docs?.response) throw new Error(`OpenAPI webhooks: no documented GET ${from.operationId}`);
  let schema = route.docs.response;
  if (from.member) schema = (deref(schema).properties as Record<string, JsonSchema>)[from.member];
  if (from.items) schema = deref(schema).items as JsonSchema;
  if (!from.omit?.length) return schema;
  const whole = deref(schema);
  // Never carried: a body that has one of them breaks the contract (`not: {}` matches nothing).
  const never = Object.fromEntries(
    from.omit.map((name) => [name, { not: {}, description: 'Never in a webhook body' }]),
  );
  const required = (whole.required as string[] | undefined)?.filter((name) => !from.omit?.includes(name));
  return {
    ...whole,
    properties: { ...(whole.properties as object), ...never },
    ...(required ? { required } : {}),
  };
}

/** The resource of one event type: the read's answer or the described one (either, when both), plus what the event adds. */
function resourceSchema(routes: readonly RestRoute[], doc: WebhookPayloadDoc): JsonSchema {
  const shapes = [...(doc.from ? [fromRead(routes, doc.from)] : []), ...(doc.resource ? [doc.resource] : [])];
  const base = shapes.length === 1 ? shapes[0] : { anyOf: shapes };
  if (!doc.adds) return base;
  return { allOf: [base, { type: 'object', required: Object.keys(doc.adds), properties: doc.adds }] };
}

const header = (name: string, description: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema: { type: 'string' },
});
const SIGNATURE_HEADERS = [
  header('webhook-id', 'The delivery id: the same on every attempt of one delivery'),
  header('webhook-timestamp', 'Seconds since the epoch when the attempt was signed'),
  header(
    'webhook-signature',
    "`v1,<base64 HMAC-SHA256>`; during a secret rotation's overlap two, space-separated (`v1,<new> v1,<old>`)",
  ),
];

/** `rescue.status_changed` -> `rescueStatusChangedWebhook` */
const operationId = (type: string) =>
  `${type.replace(/[._]([a-z])/g, (_, c: string) => c.toUpperCase())}Webhook`;

/**
 * The OpenAPI 3.1 `webhooks` section: one POST per event type the areas declare, its body the Standard
 * Webhooks message (`id`, `type`, `timestamp`, `data { path, resource }`).
 */
export function webhooksSection(routes: readonly RestRoute[]): Record<string, unknown> {
  const docs = Object.values(subgraphDefinitions).flatMap((definition) => definition.webhookPayloads ?? []);
  return Object.fromEntries(
    docs.map((doc) => [
      doc.type,
      {
        post: {
          operationId: operationId(doc.type),
          summary: doc.summary,
          tags: ['Webhooks'],
          // Sent by the API, not called with a token: the receiver verifies the signature headers.
          security: [],
          description:
            'Sent to each subscription of the organisation that asked for this type, signed per the Standard Webhooks ' +
            'specification (docs/webhooks.md).',
          parameters: SIGNATURE_HEADERS,
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['id', 'type', 'timestamp', 'data'],
                  properties: {
                    id: {
                      type: 'string',
                      format: 'uuid',
                      description: 'The event id (the same for every subscription)',
                    },
                    type: { type: 'string', const: doc.type },
                    timestamp: {
                      type: 'string',
                      format: 'date-time',
                      description: 'When the change was committed',
                    },
                    data: {
                      type: 'object',
                      required: ['path', 'resource'],
                      properties: {
                        path: { type: 'string', description: "The resource's REST path" },
                        resource: resourceSchema(routes, doc),
                      },
                    },
                  },
                },
              },
            },
          },
          responses: {
            '2XX': {
              description: 'Received. Any other answer, or none within WEBHOOK_TIMEOUT_MS, is retried',
            },
          },
        },
      },
    ]),
  );
}
