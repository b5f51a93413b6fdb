import { EVENT_TYPES, isEventType, type EventType } from '../events.ts';
import { badInput } from '../platform/errors.ts';
import { eventTypeToEnum } from '../platform/webhooks/events.ts';

/** The type of the event sendTestWebhook sends: not subscribable, never in the history. */
export const TEST_EVENT = 'webhook.test';

/** Every type a delivery may carry: the catalogue's, then the test event's. */
export const DELIVERED_TYPES: readonly string[] = [...EVENT_TYPES, TEST_EVENT];

/** A delivered type from its GraphQL enum value (`WEBHOOK_TEST` -> `webhook.test`). */
export function deliveredTypeFromEnum(value: string): string {
  const found = DELIVERED_TYPES.find((type) => eventTypeToEnum(type) === value);
  if (!found) throw new Error(`unknown event type enum ${value}`);
  return found;
}

/** A subscribable type from its enum value: WEBHOOK_TEST is refused (400) on `field`. */
export function subscribableFromEnum(value: string, field = 'eventTypes'): EventType {
  const type = deliveredTypeFromEnum(value);
  if (!isEventType(type)) throw badInput(`${value} cannot be subscribed to; sendTestWebhook sends it`, field);
  return type;
}
