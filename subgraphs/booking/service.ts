import { LockMode, type EntityManager, type FilterQuery } from '@mikro-orm/core';
import { badInput, conflict, isConstraintConflict, notFound } from '../platform/errors.ts';
import { VIN_PATTERN } from '../platform/scalars.ts';
import { DEVICE_ID_MAX } from './rules.ts';
import { Booking, ID_MAX, Vehicle, type BookingStatus } from './entities.ts';
import { afterCursor, BOOKING_ORDER, checkPageSize, decodeCursor, toPage, type Page } from './paging.ts';
import { recordBookingEvent } from './events.ts';

/** Constraint names of the migration, used to tell which rule a database conflict broke. */
export const CONSTRAINTS = {
  vin: 'vehicles_org_vin_unique',
  device: 'vehicles_org_device_unique',
  bookingId: 'bookings_org_booking_unique',
  overlap: 'bookings_no_overlap',
} as const;

export interface StartBookingInput {
  bookingId?: string | null;
  vin: string;
  userId?: string | null;
  deviceId?: string | null;
  startTimestamp: number;
  estimatedEndTimestamp?: number | null;
}

export interface BookingFilter {
  vin?: string | null;
  userId?: string | null;
  status?: BookingStatus | null;
  startFrom?: number | null;
  startTo?: number | null;
}

/** A VIN is exactly 17 letters or digits and is kept upper-case. */
export function normaliseVin(vin: unknown, field = 'vin'): string {
  if (typeof vin !== 'string' || !VIN_PATTERN.test(vin)) throw badInput('VIN must be exactly 17 letters or digits', field);
  return vin.toUpperCase();
}

/** An optional identifier: absent or null stays absent; otherwise a non-empty string of bounded length. */
function optionalId(value: string | null | undefined, field: string, max: number): string | undefined {
  if (value == null) return undefined;
  if (value.trim() === '') throw badInput(`${field.split('.').pop()} must be a non-empty string when supplied`, field);
  if (value.length > max) throw badInput(`${field.split('.').pop()} must be at most ${max} characters`, field);
  return value;
}

function checkEpoch(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw badInput(`${field.split('.').pop()} must be a whole number of epoch seconds`, field);
  }
  return value;
}

/** The name of the constraint a database error reports, when it reports one. */
function constraintOf(error: unknown): string {
  const e = error as { constraint?: string; message?: string } | null;
  return e?.constraint ?? e?.message ?? '';
}

const overlapConflict = (vin: string) =>
  conflict(`Vehicle '${vin}' already has a booking whose period overlaps this one (a vehicle's bookings may not overlap)`, { field: 'input.startTimestamp', reason: 'BOOKING_OVERLAP', vin });

/** Domain rules of area A. Every write that can race is decided by a database constraint. */
export class BookingService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  async getVehicle(vin: string): Promise<Vehicle> {
    const normalised = normaliseVin(vin);
    const vehicle = await this.em.findOne(Vehicle, { vin: normalised });
    if (!vehicle) throw notFound('Vehicle', normalised);
    return vehicle;
  }

  async getBooking(bookingId: string): Promise<Booking> {
    const booking = await this.em.findOne(Booking, { bookingId });
    if (!booking) throw notFound('Booking', bookingId);
    return booking;
  }

  /** Creates a vehicle; a device given here is paired with it (and unpaired from any other vehicle). */
  async createVehicle(vin: string, deviceId?: string | null): Promise<Vehicle> {
    const normalised = normaliseVin(vin);
    const device = optionalId(deviceId, 'deviceId', DEVICE_ID_MAX);
    try {
      return await this.em.transactional(async (em) => {
        if (device) await this.unpairElsewhere(em, device, normalised);
        const vehicle = em.create(Vehicle, { vin: normalised, deviceId: device ?? null } as never);
        await em.flush();
        return vehicle;
      });
    } catch (error) {
      if (isConstraintConflict(error) && constraintOf(error).includes(CONSTRAINTS.vin)) {
        throw conflict(`Vehicle '${normalised}' already exists`, { field: 'vin', resource: 'Vehicle', id: normalised });
      }
      throw this.translate(error, normalised);
    }
  }

  /** Pairs `deviceId` with the vehicle, unpairing it from any other vehicle, in one transaction. */
  async pairDevice(vin: string, deviceId: string): Promise<Vehicle> {
    const normalised = normaliseVin(vin);
    const device = optionalId(deviceId, 'deviceId', DEVICE_ID_MAX);
    if (!device) throw badInput('deviceId is required', 'deviceId');
    try {
      return await this.em.transactional(async (em) => {
        const vehicle = await em.findOne(Vehicle, { vin: normalised });
        if (!vehicle) throw notFound('Vehicle', normalised);
        if (vehicle.deviceId !== device) {
          await this.unpairElsewhere(em, device, normalised);
          vehicle.deviceId = device;
          await em.flush();
        }
        return vehicle;
      });
    } catch (error) {
      throw this.translate(error, normalised);
    }
  }

  /**
   * Starts a booking: the vehicle must exist; a device is needed (paired already or supplied, and a
   * different one re-pairs the vehicle); an estimated end must be later than the start. Missing ids
   * are generated. Overlaps and duplicate ids are refused by the database, so races cannot slip through.
   */
  async startBooking(input: StartBookingInput): Promise<Booking> {
    const vin = normaliseVin(input.vin, 'input.vin');
    const start = checkEpoch(input.startTimestamp, 'input.startTimestamp');
    const estimatedEnd = input.estimatedEndTimestamp == null ? null : checkEpoch(input.estimatedEndTimestamp, 'input.estimatedEndTimestamp');
    if (estimatedEnd !== null && estimatedEnd <= start) {
      throw badInput('estimatedEndTimestamp must be later than startTimestamp', 'input.estimatedEndTimestamp');
    }
    const suppliedDevice = optionalId(input.deviceId, 'input.deviceId', DEVICE_ID_MAX);
    const bookingId = optionalId(input.bookingId, 'input.bookingId', ID_MAX) ?? crypto.randomUUID();
    const userId = optionalId(input.userId, 'input.userId', ID_MAX) ?? crypto.randomUUID();
    try {
      return await this.em.transactional(async (em) => {
        const vehicle = await em.findOne(Vehicle, { vin });
        if (!vehicle) throw notFound('Vehicle', vin);
        const deviceId = suppliedDevice ?? vehicle.deviceId;
        if (!deviceId) throw badInput(`deviceID is required: vehicle '${vin}' has no paired device`, 'input.deviceId');
        if (deviceId !== vehicle.deviceId) {
          await this.unpairElsewhere(em, deviceId, vin);
          vehicle.deviceId = deviceId;
        }
        const booking = em.create(Booking, {
          bookingId, vin, userId, deviceId, startTimestamp: start, estimatedEndTimestamp: estimatedEnd, actualEndTimestamp: null,
        } as never);
        await em.flush();
        recordBookingEvent(em, 'booking.started', booking);
        return booking;
      });
    } catch (error) {
      if (isConstraintConflict(error) && constraintOf(error).includes(CONSTRAINTS.bookingId)) {
        throw conflict(`A booking with id '${bookingId}' already exists`, { field: 'input.bookingId', resource: 'Booking', id: bookingId });
      }
      throw this.translate(error, vin);
    }
  }

  /** Ends a booking once; the row is locked so that two concurrent ends cannot both succeed. */
  async endBooking(bookingId: string, actualEndTimestamp: number): Promise<Booking> {
    const actualEnd = checkEpoch(actualEndTimestamp, 'actualEndTimestamp');
    let vin = '';
    try {
      return await this.em.transactional(async (em) => {
        const booking = await em.findOne(Booking, { bookingId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
        if (!booking) throw notFound('Booking', bookingId);
        vin = booking.vin;
        if (booking.actualEndTimestamp != null) {
          throw conflict(`Booking '${bookingId}' has already ended`, { field: 'bookingId', reason: 'BOOKING_ENDED' });
        }
        if (actualEnd <= booking.startTimestamp) {
          throw badInput('actualEndTimestamp must be later than the booking\'s startTimestamp', 'actualEndTimestamp');
        }
        booking.actualEndTimestamp = actualEnd;
        await em.flush();
        recordBookingEvent(em, 'booking.ended', booking);
        return booking;
      });
    } catch (error) {
      if (isConstraintConflict(error) && constraintOf(error).includes(CONSTRAINTS.overlap)) {
        throw conflict(`Ending booking '${bookingId}' at ${actualEnd} would overlap a later booking of vehicle '${vin}'`,
          { field: 'actualEndTimestamp', reason: 'BOOKING_OVERLAP', vin });
      }
      throw this.translate(error, vin);
    }
  }

  /** A page of bookings matching `filter`, most recent start first; one SQL statement. */
  async listBookings(filter: BookingFilter | null | undefined, first?: number | null, after?: string | null): Promise<Page<Booking>> {
    const size = checkPageSize(first);
    const cursor = decodeCursor(after);
    const where = bookingWhere(filter ?? {});
    const rows = await this.em.find(Booking, { $and: [where, afterCursor(cursor)] } as FilterQuery<Booking>, {
      orderBy: [...BOOKING_ORDER] as never, limit: size + 1,
    });
    return toPage(rows, size);
  }

  /** Clears `deviceId` from every other vehicle of the organisation (at most one holds it). */
  private async unpairElsewhere(em: EntityManager, deviceId: string, vin: string) {
    await em.nativeUpdate(Vehicle, { deviceId, vin: { $ne: vin } }, { deviceId: null, updatedAt: new Date() });
  }

  /** Turns the remaining constraint conflicts into clear 409s; anything else passes unchanged. */
  private translate(error: unknown, vin: string): unknown {
    if (!isConstraintConflict(error)) return error;
    const constraint = constraintOf(error);
    if (constraint.includes(CONSTRAINTS.overlap)) return overlapConflict(vin);
    if (constraint.includes(CONSTRAINTS.device)) {
      return conflict('The device was paired with another vehicle at the same moment; retry', { field: 'deviceId', reason: 'DEVICE_PAIRING_RACE' });
    }
    return conflict('The change collides with existing data');
  }
}

/** The where clause of a booking filter (the organisation is added by the tenant filter). */
export function bookingWhere(filter: BookingFilter): FilterQuery<Booking> {
  const where: Record<string, unknown> = {};
  if (filter.vin != null) where.vin = normaliseVin(filter.vin, 'filter.vin');
  if (filter.userId != null) where.userId = filter.userId;
  if (filter.status === 'ACTIVE') where.actualEndTimestamp = null;
  if (filter.status === 'ENDED') where.actualEndTimestamp = { $ne: null };
  const from = filter.startFrom == null ? undefined : checkEpoch(filter.startFrom, 'filter.startFrom');
  const to = filter.startTo == null ? undefined : checkEpoch(filter.startTo, 'filter.startTo');
  if (from !== undefined && to !== undefined && to <= from) throw badInput('startTo must be later than startFrom', 'filter.startTo');
  if (from !== undefined || to !== undefined) where.startTimestamp = { ...(from !== undefined ? { $gte: from } : {}), ...(to !== undefined ? { $lt: to } : {}) };
  return where as FilterQuery<Booking>;
}
