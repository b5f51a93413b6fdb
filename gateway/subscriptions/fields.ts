import type { EventType } from '../../subgraphs/platform/webhooks/events.ts';

/**
 * The Subscription fields and what runs them: each is the query field of the same entity, run with
 * the subscription's selection set whenever an event of one of its types commits on the watched key.
 * The key is the outbox's resource key, `<kind>:<argument value>`.
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

export const LIVE_FIELDS: Readonly<Record<string, LiveField>> = {
  rescueUpdated: { query: 'rescue', argument: 'reqId', kind: 'rescue', events: ['rescue.status_changed', 'rescue.updated', 'rescue.cancelled'] },
  bookingUpdated: { query: 'booking', argument: 'bookingId', kind: 'booking', events: ['booking.started', 'booking.ended'] },
  userUpdated: { query: 'user', argument: 'userId', kind: 'user', events: ['user.updated', 'mvr.created', 'score.changed'] },
  coverageScoreChanged: { query: 'prequalCoverageScore', argument: 'userId', kind: 'user', events: ['score.changed'] },
};

export const resourceKeyOf = (field: LiveField, id: string) => `${field.kind}:${id}`;
