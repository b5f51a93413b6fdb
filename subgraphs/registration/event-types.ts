import type { AreaEvents } from '../platform/webhooks/events.ts';

/** The events the registration area records (services/events.ts); no subscription field follows them yet. */
export const registrationEvents = {
  types: ['device.status_changed', 'consent.changed'],
  live: {},
} as const satisfies AreaEvents;

export type RegistrationEventType = (typeof registrationEvents.types)[number];
