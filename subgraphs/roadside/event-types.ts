import type { AreaEvents } from '../platform/webhooks/events.ts';

/** The events the roadside area records (services/events.ts) and the subscription field that follows a rescue. */
export const roadsideEvents = {
  types: ['rescue.status_changed', 'rescue.updated', 'rescue.cancelled'],
  live: {
    rescueUpdated: { query: 'rescue', argument: 'reqId', kind: 'rescue', events: ['rescue.status_changed', 'rescue.updated', 'rescue.cancelled'] },
  },
} as const satisfies AreaEvents;

export type RoadsideEventType = (typeof roadsideEvents.types)[number];
