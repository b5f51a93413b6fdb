import type { EntityManager } from '@mikro-orm/core';
import { recordEvent } from '../platform/webhooks/outbox.ts';
import { bookingStatus, type Booking } from './entities.ts';
import { restBooking } from './representation.ts';

/** Records booking.started or booking.ended on `tx`, after the flush that wrote the booking (so it carries its timestamps). */
export function recordBookingEvent(tx: EntityManager, type: 'booking.started' | 'booking.ended', b: Booking) {
  const resource = restBooking({
    bookingId: b.bookingId, vin: b.vin, userId: b.userId, deviceId: b.deviceId, startTimestamp: b.startTimestamp,
    estimatedEndTimestamp: b.estimatedEndTimestamp ?? null, actualEndTimestamp: b.actualEndTimestamp ?? null,
    status: bookingStatus(b), createdAt: b.createdAt.toISOString(), updatedAt: b.updatedAt.toISOString(),
  });
  recordEvent(tx, {
    type, resourceKey: `booking:${b.bookingId}`,
    resourcePath: `/shared-mobility-insights/v2/bookings/${encodeURIComponent(b.bookingId)}`, resource,
  });
}
