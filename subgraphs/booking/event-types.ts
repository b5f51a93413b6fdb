import type { AreaEvents } from '../platform/webhooks/events.ts';

/** The events the booking area records (events.ts) and the subscription field that follows a booking. */
export const bookingEvents = {
  types: ['booking.started', 'booking.ended'],
  live: {
    bookingUpdated: { query: 'booking', argument: 'bookingId', kind: 'booking', events: ['booking.started', 'booking.ended'] },
  },
} as const satisfies AreaEvents;

export type BookingEventType = (typeof bookingEvents.types)[number];
