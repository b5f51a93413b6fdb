import { defineEntity, p } from '@mikro-orm/core';
import { tenantProperties } from '../platform/db/tenant.ts';
import { DEVICE_ID_MAX } from './rules.ts';

/** Longest accepted booking or user id. */
export const ID_MAX = 255;

/**
 * A fleet vehicle. (orgId, vin) is unique; (orgId, deviceId) is unique too, so a device is paired
 * with at most one vehicle of an organisation (PostgreSQL lets many rows hold a null deviceId).
 */
export const VehicleSchema = defineEntity({
  name: 'Vehicle',
  tableName: 'vehicles',
  uniques: [
    { properties: ['orgId', 'vin'], name: 'vehicles_org_vin_unique' },
    { properties: ['orgId', 'deviceId'], name: 'vehicles_org_device_unique' },
  ],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    vin: p.string().length(17),
    deviceId: p.string().length(DEVICE_ID_MAX).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export class Vehicle extends VehicleSchema.class {}
VehicleSchema.setClass(Vehicle);

/**
 * A booking of a vehicle. Its period is [start, actualEnd ?? estimatedEnd ?? open); the migration
 * adds an exclusion constraint so that two periods of one vehicle never overlap, whatever races.
 * The status is not stored: a booking is ENDED exactly when it has an actual end.
 */
export const BookingSchema = defineEntity({
  name: 'Booking',
  tableName: 'bookings',
  uniques: [{ properties: ['orgId', 'bookingId'], name: 'bookings_org_booking_unique' }],
  indexes: [
    { properties: ['orgId', 'vin', 'startTimestamp'], name: 'bookings_org_vin_start_index' },
    { properties: ['orgId', 'userId', 'startTimestamp'], name: 'bookings_org_user_start_index' },
    { properties: ['orgId', 'startTimestamp'], name: 'bookings_org_start_index' },
  ],
  checks: [
    { name: 'bookings_estimated_end_after_start', expression: 'estimated_end_timestamp is null or estimated_end_timestamp > start_timestamp' },
    { name: 'bookings_actual_end_after_start', expression: 'actual_end_timestamp is null or actual_end_timestamp > start_timestamp' },
    // A vehicle's bookings never overlap. The database decides (SQLSTATE 23P01, answered as a 409), so
    // concurrent starts on one vehicle cannot both succeed. Needs btree_gist (created by the migration).
    {
      name: 'bookings_no_overlap',
      expression: 'exclude using gist (org_id with =, vin with =, int8range(start_timestamp, coalesce(actual_end_timestamp, estimated_end_timestamp)) with &&)',
    },
  ],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    bookingId: p.string().length(ID_MAX),
    vin: p.string().length(17),
    userId: p.string().length(ID_MAX),
    deviceId: p.string().length(DEVICE_ID_MAX),
    startTimestamp: p.bigint('number'),
    estimatedEndTimestamp: p.bigint('number').nullable(),
    actualEndTimestamp: p.bigint('number').nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});

export class Booking extends BookingSchema.class {}
BookingSchema.setClass(Booking);

export type BookingStatus = 'ACTIVE' | 'ENDED';

export const bookingStatus = (booking: Pick<Booking, 'actualEndTimestamp'>): BookingStatus => (booking.actualEndTimestamp == null ? 'ACTIVE' : 'ENDED');
