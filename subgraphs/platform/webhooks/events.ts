/**
 * What an area declares of the events it records (its `event-types.ts`); the catalogue of every area's is
 * subgraphs/events.ts.
 */

/** An event type as webhook bodies and the REST API spell it: `<resource>.<change>`, e.g. `booking.started`. */
export type EventType = `${string}.${string}`;

/**
 * A Subscription field: the query field of the same entity, run with the subscription's selection set
 * whenever an event of one of its types commits on the watched key, `<kind>:<argument value>` (the
 * outbox's resource key).
 */
export interface LiveField {
  /** The Query field run per event, with the subscription field's arguments. */
  query: string;
  /** The argument that names the watched entity. */
  argument: string;
  /** The kind of the outbox's resource key (`rescue` in `rescue:<reqId>`). */
  kind: string;
  /** The event types that run it. */
  events: readonly EventType[];
}

/** The outbox's resource key of the entity a live field watches. */
export const resourceKeyOf = (field: LiveField, id: string) => `${field.kind}:${id}`;

export interface AreaEvents {
  /** The event types the area records, in the order the contract lists them. */
  types: readonly EventType[];
  /** The Subscription fields that follow them, by name. */
  live: Readonly<Record<string, LiveField>>;
}

/** GraphQL spells event types as enum values: `rescue.status_changed` <-> `RESCUE_STATUS_CHANGED`. */
export const eventTypeToEnum = (type: string) => type.replace('.', '_').toUpperCase();
