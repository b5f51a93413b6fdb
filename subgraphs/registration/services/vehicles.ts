import type { EntityManager } from '@mikro-orm/core';
import { badInput, conflict, isConstraintConflict, notFound } from '../../platform/errors.ts';
import { VIN_PATTERN } from '../../platform/scalars.ts';
import { RegisteredVehicle } from '../entities.ts';
import { checkDate, checkId, idOrGenerated, optionalText, today } from './common.ts';
import { inTransaction, RegisteredDeviceService } from './devices.ts';
import { RegisteredUserService } from './users.ts';

export interface VehicleFields {
  vin?: unknown;
  make?: unknown;
  model?: unknown;
  year?: unknown;
  userId?: unknown;
}

export interface NewVehicleDevice { deviceId?: unknown; type?: unknown }

function checkYear(value: unknown, field: string): number | null {
  if (value == null) return null;
  const max = new Date().getUTCFullYear() + 2;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1886 || value > max) throw badInput(`${field} must be a whole year between 1886 and ${max}`, field);
  return value;
}

function checkVin(value: unknown, field: string): string | null {
  if (value == null) return null;
  if (typeof value !== 'string' || !VIN_PATTERN.test(value)) throw badInput(`${field} must be exactly 17 letters or digits`, field);
  return value.toUpperCase();
}

/** Validated vehicle fields; only the keys present in `fields` appear in the result. */
function parseFields(fields: VehicleFields) {
  const out: Partial<Pick<RegisteredVehicle, 'vin' | 'make' | 'model' | 'year' | 'userId'>> = {};
  if (fields.vin !== undefined) out.vin = checkVin(fields.vin, 'vin');
  if (fields.make !== undefined) out.make = optionalText(fields.make, 'make', 100);
  if (fields.model !== undefined) out.model = optionalText(fields.model, 'model', 100);
  if (fields.year !== undefined) out.year = checkYear(fields.year, 'year');
  if (fields.userId !== undefined) out.userId = fields.userId == null ? null : checkId(fields.userId, 'userId');
  return out;
}

export class RegisteredVehicleService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  async get(vehicleIdIn: string): Promise<RegisteredVehicle> {
    const vehicleId = checkId(vehicleIdIn, 'vehicleId');
    const vehicle = await this.em.findOne(RegisteredVehicle, { vehicleId });
    if (!vehicle) throw notFound('RegisteredVehicle', vehicleId);
    return vehicle;
  }

  create(input: VehicleFields & { vehicleId?: unknown }): Promise<RegisteredVehicle> {
    return this.createWithDevices({ ...input, devices: [] });
  }

  /** Creates a vehicle and associates the listed devices (new or unassociated ones) with it, all or nothing. */
  createWithDevices(input: VehicleFields & { vehicleId?: unknown; devices?: unknown; effectiveDate?: unknown }): Promise<RegisteredVehicle> {
    const vehicleId = idOrGenerated(input.vehicleId, 'vehicleId');
    const fields = parseFields(input);
    const from = checkDate(input.effectiveDate, 'effectiveDate', today());
    if (input.devices !== undefined && !Array.isArray(input.devices)) throw badInput('devices must be a list of { deviceId, type }', 'devices');
    const devices = (input.devices ?? []) as NewVehicleDevice[];
    const ids = devices.map((d, i) => {
      if (typeof d !== 'object' || d === null) throw badInput('each device must be an object { deviceId, type }', `devices.${i}`);
      return checkId(d.deviceId, `devices.${i}.deviceId`);
    });
    if (new Set(ids).size !== ids.length) throw badInput('devices lists the same deviceId twice', 'devices');
    return inTransaction(this.em, async (tx) => {
      const userId = fields.userId ?? null;
      if (userId) {
        const users = new RegisteredUserService(tx);
        if (devices.length) await users.requireActive(userId, 'new devices');
        else await users.get(userId);
      }
      const vehicle = tx.create(RegisteredVehicle, { vehicleId, vin: null, make: null, model: null, year: null, userId: null, ...fields } as never);
      try {
        await tx.flush();
      } catch (error) {
        if (isConstraintConflict(error)) throw conflict(`A vehicle with id '${vehicleId}' already exists`, { field: 'vehicleId' });
        throw error;
      }
      const deviceService = new RegisteredDeviceService(tx);
      for (const [i, d] of devices.entries()) await deviceService.attachNewToVehicle(ids[i]!, d.type, vehicleId, userId, from);
      return vehicle;
    }, 'A device or the vehicle id is already in use');
  }

  /** Changes the fields sent (null clears one); the vehicle id cannot change. */
  async update(vehicleId: string, input: VehicleFields & { vehicleId?: unknown }): Promise<RegisteredVehicle> {
    if (input.vehicleId != null && input.vehicleId !== vehicleId) throw badInput('The vehicleId of a vehicle cannot change', 'vehicleId');
    const fields = parseFields(input);
    const vehicle = await this.get(vehicleId);
    if (fields.userId) await new RegisteredUserService(this.em).get(fields.userId);
    Object.assign(vehicle, fields);
    await this.em.flush();
    return vehicle;
  }
}
