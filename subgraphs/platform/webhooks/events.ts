/** The event types partners can subscribe to, as they appear in webhook bodies and the REST API. */
export const EVENT_TYPES = [
  'rescue.status_changed', 'rescue.updated', 'rescue.cancelled', 'booking.started', 'booking.ended', 'device.status_changed', 'consent.changed',
  'mvr.created', 'user.updated', 'score.changed',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** GraphQL spells event types as enum values: `rescue.status_changed` <-> `RESCUE_STATUS_CHANGED`. */
export const eventTypeToEnum = (type: string) => type.replace('.', '_').toUpperCase();
export const eventTypeFromEnum = (value: string) => {
  const found = EVENT_TYPES.find((t) => eventTypeToEnum(t) === value);
  if (!found) throw new Error(`unknown event type enum ${value}`);
  return found;
};

/** Subgraphs that write events to an outbox of their own (`<name>.webhook_outbox`). */
export const EVENT_SOURCES = ['roadside', 'booking', 'registration', 'scoring'] as const;
