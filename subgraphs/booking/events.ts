import type { EntityManager } from '@mikro-orm/core';
import { recordEvent } from '../platform/webhooks/outbox.ts';
import { bookingStatus, type Booking } from './entities.ts';

/** The booking as GET /shared-mobility-insights/v2/bookings/{bookingId} returns it. */
const restBooking = (b: Booking) => ({
  bookingID: b.bookingId, bookingId: b.bookingId, VIN: b.vin, vin: b.vin, userID: b.userId, userId: b.userId, deviceID: b.deviceId, deviceId: b.deviceId,
  startTimestamp: b.startTimestamp, estimatedEndTimestamp: b.estimatedEndTimestamp, actualEndTimestamp: b.actualEndTimestamp,
  status: bookingStatus(b).toLowerCase(), createdAt: b.createdAt.toISOString(), updatedAt: b.updatedAt.toISOString(),
});

/** Records booking.started or booking.ended on `tx`, after the flush that wrote the booking (so it carries its timestamps). */
export function recordBookingEvent(tx: EntityManager, type: 'booking.started' | 'booking.ended', booking: Booking) {
  recordEvent(tx, {
    type, resourceKey: `booking:${booking.bookingId}`,
    resourcePath: `/shared-mobility-insights/v2/bookings/${encodeURIComponent(booking.bookingId)}`, resource: restBooking(booking),
  });
}
