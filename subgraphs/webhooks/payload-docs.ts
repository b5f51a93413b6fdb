import type { WebhookPayloadDoc } from '../platform/rest/types.ts';
import { arrayOf, dateTime, str } from '../platform/rest/components.ts';

const rescueStatus = {
  type: 'string',
  enum: ['BOOKED', 'EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED', 'CANCELLED'],
};
const rescue = { operationId: 'getRequestStatus', member: 'serviceRequest' };
const rescueAdds = {
  previousStatus: {
    ...rescueStatus,
    description: 'The status before the change (equal to status for rescue.updated)',
  },
};
const nullableStr = { type: ['string', 'null'] };
const deviceStatus = { type: 'string', enum: ['Active', 'Inactive'] };

/**
 * What every event type's body carries in `data.resource`: published as the OpenAPI document's `webhooks`
 * (gateway/rest/openapi-webhooks.ts) and checked against real deliveries (test/webhooks/payload-schema.ts).
 */
export const webhookPayloadDocs: readonly WebhookPayloadDoc[] = [
  {
    type: 'rescue.status_changed',
    summary: 'A rescue moved along its lifecycle',
    from: rescue,
    adds: rescueAdds,
  },
  {
    type: 'rescue.updated',
    summary: "A rescue's provider reported a new position or ETA",
    from: rescue,
    adds: rescueAdds,
  },
  { type: 'rescue.cancelled', summary: 'A rescue was cancelled', from: rescue, adds: rescueAdds },
  { type: 'booking.started', summary: 'A booking started', from: { operationId: 'getBooking' } },
  { type: 'booking.ended', summary: 'A booking ended', from: { operationId: 'getBooking' } },
  {
    type: 'device.status_changed',
    summary: 'A registered device became Active or Inactive',
    resource: {
      type: 'object',
      required: ['deviceId', 'type', 'status', 'previousStatus'],
      properties: {
        deviceId: str,
        type: { type: 'string', enum: ['mobile', 'obd'] },
        status: deviceStatus,
        previousStatus: { type: ['string', 'null'], enum: ['Active', 'Inactive', null] },
        replacedByDeviceId: nullableStr,
        replacesDeviceId: nullableStr,
        updatedAt: dateTime,
      },
    },
  },
  {
    type: 'consent.changed',
    summary: 'A consent was granted or withdrawn',
    from: { operationId: 'getConsents', member: 'consents', items: true },
  },
  {
    type: 'mvr.created',
    summary: 'An MVR was recorded for a user (never its contents)',
    resource: {
      type: 'object',
      additionalProperties: false,
      required: ['mvrId', 'userId', 'source', 'createdAt'],
      properties: {
        mvrId: str,
        userId: str,
        source: { type: 'string', enum: ['sourcea', 'sourceb'] },
        createdAt: dateTime,
      },
    },
  },
  {
    type: 'user.updated',
    summary: "A user's data changed (never the date of birth)",
    from: { operationId: 'getUser', omit: ['dateOfBirth'] },
    adds: {
      changedFields: arrayOf(
        { type: 'string', enum: ['dateOfBirth', 'homeZip', 'enrollmentStatus'] },
        { minItems: 1 },
      ),
    },
  },
  {
    type: 'score.changed',
    summary: "A user's coverage score changed",
    from: { operationId: 'getPrequalCoverageScore' },
    resource: {
      type: 'object',
      required: ['userId', 'score', 'missingFields'],
      description: 'When the score can no longer be computed',
      properties: { userId: str, score: { type: 'null' }, missingFields: arrayOf(str) },
    },
    adds: { previousScore: { type: ['integer', 'null'], description: 'null when there was none' } },
  },
  {
    type: 'webhook.test',
    summary: 'Sent by POST /platform/webhooks/v1/subscriptions/{id}/test to that subscription only',
    resource: {
      type: 'object',
      required: ['subscriptionId', 'url'],
      properties: { subscriptionId: { type: 'string', format: 'uuid' }, url: str },
    },
  },
];
