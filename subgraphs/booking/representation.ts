import type { RestBookingFragment, RestVehicleFragment } from './rest.generated.ts';

/**
 * The REST body of each booking resource, one function each: REST answers feed them the GraphQL result,
 * events the stored entity, so that a webhook payload is what GET answers by construction.
 */

/** A vehicle: both spellings of each field. */
export const restVehicle = (v: RestVehicleFragment) => ({
  vin: v.vin, VIN: v.vin, deviceId: v.deviceId, deviceID: v.deviceId, createdAt: v.createdAt,
});

/** A booking: both spellings of each id, the status in lower case. */
export const restBooking = (b: RestBookingFragment) => ({
  bookingId: b.bookingId, bookingID: b.bookingId, vin: b.vin, VIN: b.vin, userId: b.userId, userID: b.userId,
  deviceId: b.deviceId, deviceID: b.deviceId, startTimestamp: b.startTimestamp, estimatedEndTimestamp: b.estimatedEndTimestamp,
  actualEndTimestamp: b.actualEndTimestamp, status: b.status.toLowerCase(), createdAt: b.createdAt, updatedAt: b.updatedAt,
});
