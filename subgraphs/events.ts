import { bookingEvents } from './booking/event-types.ts';
import { badInput } from './platform/errors.ts';
import { eventTypeToEnum, type AreaEvents, type LiveField } from './platform/webhooks/events.ts';
import { registrationEvents } from './registration/event-types.ts';
import { roadsideEvents } from './roadside/event-types.ts';
import { scoringEvents } from './scoring/event-types.ts';

/**
 * The event catalogue: the areas that record events (each in an outbox of its own,
 * `<name>.webhook_outbox`), by subgraph name, in the order the contract has always listed their types.
 * It lists the areas' declaration modules rather than reading the registry (subgraphs/index.ts), because
 * the webhooks subgraph, which the registry holds, needs the catalogue as it loads (its REST enum);
 * test/webhooks/catalogue.test.ts holds it equal to the registry's outboxes and the GraphQL WebhookEventType enum.
 */
const AREAS = {
  roadside: roadsideEvents, booking: bookingEvents, registration: registrationEvents, scoring: scoringEvents,
} satisfies Record<string, AreaEvents>;

/** Subgraphs that write events to an outbox of their own. */
export const EVENT_SOURCES = Object.keys(AREAS);

export type EventType = (typeof AREAS)[keyof typeof AREAS]['types'][number];
/** The event types partners can subscribe to, as they appear in webhook bodies and the REST API. */
export const EVENT_TYPES: readonly EventType[] = Object.values(AREAS).flatMap((area) => area.types);

export const isEventType = (value: unknown): value is EventType => (EVENT_TYPES as readonly unknown[]).includes(value);

/** A caller's list of event types (`rescue.status_changed`); anything else is a 400 naming the accepted ones. */
export function parseEventTypes(value: unknown, field = 'eventTypes'): EventType[] {
  const accepted = EVENT_TYPES.join(', ');
  if (!Array.isArray(value) || !value.length) throw badInput(`${field} must list at least one of ${accepted}`, field);
  return value.map((type) => {
    if (!isEventType(type)) throw badInput(`unknown event type ${JSON.stringify(type)}; one of ${accepted}`, field);
    return type;
  });
}

/** The Subscription fields the areas declare, by name. */
export const LIVE_FIELDS: Readonly<Record<string, LiveField>> = Object.assign(
  {}, ...Object.values(AREAS).map((area) => area.live),
);

/** An event type from its GraphQL enum value (`RESCUE_STATUS_CHANGED`). */
export function eventTypeFromEnum(value: string): EventType {
  const found = EVENT_TYPES.find((type) => eventTypeToEnum(type) === value);
  if (!found) throw new Error(`unknown event type enum ${value}`);
  return found;
}
