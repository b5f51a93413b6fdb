import type { EntityManager } from '@mikro-orm/core';
import { badInput, conflict, isConstraintConflict, notFound } from '../../platform/errors.ts';
import { DEVICE_STATUSES, DEVICE_TYPES, DeviceAssociation, RegisteredDevice, RegisteredVehicle, type DeviceType, type EndReason } from '../entities.ts';
import { checkDate, checkId, oneOf, today } from './common.ts';
import { RegisteredUserService } from './users.ts';
import { recordDeviceStatusEvent } from './events.ts';

/** True while an association counts as current: open, or ending after today. */
export const isCurrent = (a: DeviceAssociation, day = today()) => a.effectiveFrom <= day ? a.effectiveTo == null || a.effectiveTo > day : a.effectiveTo == null;

export interface AssociateOptions { effectiveDate?: unknown; type?: unknown }

/** Runs `fn` in a transaction; a constraint violation (two writers on one device) becomes a 409. */
export async function inTransaction<T>(em: EntityManager, fn: (tx: EntityManager) => Promise<T>, what = 'The device changed concurrently; retry'): Promise<T> {
  try {
    return await em.transactional(fn);
  } catch (error) {
    if (isConstraintConflict(error)) throw conflict(what);
    throw error;
  }
}

export class RegisteredDeviceService {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  async get(deviceIdIn: string): Promise<RegisteredDevice> {
    const deviceId = checkId(deviceIdIn, 'deviceId');
    const device = await this.em.findOne(RegisteredDevice, { deviceId });
    if (!device) throw notFound('RegisteredDevice', deviceId);
    return device;
  }

  /** The device's open association (no end date yet), if any. */
  openAssociation(deviceId: string) {
    return this.em.findOne(DeviceAssociation, { deviceId, effectiveTo: null });
  }

  /** Devices currently associated with a user (or, with `includeEnded`, ever associated). */
  async listForUser(userId: string, includeEnded = false): Promise<RegisteredDevice[]> {
    await new RegisteredUserService(this.em).get(userId);
    const rows = await this.em.find(DeviceAssociation, { userId }, { orderBy: { effectiveFrom: 'asc', createdAt: 'asc' } });
    const ids = [...new Set(rows.filter((a) => includeEnded || isCurrent(a)).map((a) => a.deviceId))];
    if (!ids.length) return [];
    const devices = await this.em.find(RegisteredDevice, { deviceId: { $in: ids } });
    const byId = new Map(devices.map((d) => [d.deviceId, d]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  /** The user a device currently belongs to. */
  async currentUserId(deviceId: string): Promise<string> {
    await this.get(deviceId);
    const rows = await this.em.find(DeviceAssociation, { deviceId, userId: { $ne: null } }, { orderBy: { effectiveFrom: 'desc', createdAt: 'desc' } });
    const current = rows.find((a) => isCurrent(a));
    if (!current?.userId) throw notFound('RegisteredUser for device', deviceId);
    return current.userId;
  }

  /** Finds or creates the device; a new device gets `type` (mobile by default). */
  private async ensureDevice(deviceId: string, type: unknown): Promise<RegisteredDevice> {
    const existing = await this.em.findOne(RegisteredDevice, { deviceId });
    if (existing) {
      if (existing.status !== 'Active') throw conflict(`Device '${deviceId}' is Inactive; set its status to Active before associating it`, { deviceId });
      return existing;
    }
    const parsed: DeviceType = type == null ? 'mobile' : oneOf(DEVICE_TYPES, type, 'type');
    return this.em.create(RegisteredDevice, { deviceId, type: parsed, status: 'Active' } as never);
  }

  /** A new association may not start inside a period whose end was already set (ended later than `from`). */
  private async assertFreeFrom(deviceId: string, from: string) {
    const later = await this.em.findOne(DeviceAssociation, { deviceId, effectiveTo: { $gt: from } }, { orderBy: { effectiveTo: 'desc' } });
    if (later) throw conflict(`Device '${deviceId}' is associated until ${later.effectiveTo}; the new association cannot start on ${from}`, { deviceId });
  }

  /** Ends the open row (once; rows are never overwritten otherwise) and flushes, before any new open row is inserted. */
  private async endOpen(open: DeviceAssociation, on: string, reason: EndReason, field: string) {
    if (on < open.effectiveFrom) throw badInput(`${field} ${on} is before the association's start ${open.effectiveFrom}`, field);
    open.effectiveTo = on;
    open.endReason = reason;
    open.endedAt = new Date();
    await this.em.flush();
  }

  private async openNew(deviceId: string, userId: string | null, vehicleId: string | null, from: string) {
    await this.assertFreeFrom(deviceId, from);
    this.em.create(DeviceAssociation, { deviceId, userId, vehicleId, effectiveFrom: from, effectiveTo: null, endReason: null, endedAt: null } as never);
    await this.em.flush();
  }

  /**
   * Assigns a device to a user, or re-associates it from another user (the vehicle, if any, stays).
   * Creates an unknown device. Already with that user: nothing changes.
   */
  assignToUser(deviceIdIn: unknown, userIdIn: unknown, options: AssociateOptions = {}): Promise<RegisteredDevice> {
    const deviceId = checkId(deviceIdIn, 'deviceId');
    const userId = checkId(userIdIn, 'userId');
    const from = checkDate(options.effectiveDate, 'effectiveDate', today());
    return inTransaction(this.em, async (tx) => {
      const svc = new RegisteredDeviceService(tx);
      await new RegisteredUserService(tx).requireActive(userId, 'new devices');
      const device = await svc.ensureDevice(deviceId, options.type);
      await tx.flush();
      const open = await svc.openAssociation(deviceId);
      if (open?.userId === userId) return device;
      if (open) await svc.endOpen(open, from, 'reassociated', 'effectiveDate');
      await svc.openNew(deviceId, userId, open?.vehicleId ?? null, from);
      return device;
    });
  }

  /** Associates a device with a vehicle (the user, if any, stays). Creates an unknown device. */
  associateVehicle(deviceIdIn: unknown, vehicleIdIn: unknown, options: AssociateOptions = {}): Promise<RegisteredDevice> {
    const deviceId = checkId(deviceIdIn, 'deviceId');
    const vehicleId = checkId(vehicleIdIn, 'vehicleId');
    const from = checkDate(options.effectiveDate, 'effectiveDate', today());
    return inTransaction(this.em, async (tx) => {
      const svc = new RegisteredDeviceService(tx);
      if (!(await tx.findOne(RegisteredVehicle, { vehicleId }))) throw notFound('RegisteredVehicle', vehicleId);
      const device = await svc.ensureDevice(deviceId, options.type);
      await tx.flush();
      const open = await svc.openAssociation(deviceId);
      if (open?.vehicleId === vehicleId) return device;
      if (open) await svc.endOpen(open, from, 'reassociated', 'effectiveDate');
      await svc.openNew(deviceId, open?.userId ?? null, vehicleId, from);
      return device;
    });
  }

  /** Used by vehicle creation inside its own transaction: a device that is not associated elsewhere. */
  async attachNewToVehicle(deviceId: string, type: unknown, vehicleId: string, userId: string | null, from: string) {
    const device = await this.ensureDevice(deviceId, type);
    await this.em.flush();
    const open = await this.openAssociation(deviceId);
    if (open) throw conflict(`Device '${deviceId}' is already associated with ${open.vehicleId ? `vehicle '${open.vehicleId}'` : `user '${open.userId}'`}`, { deviceId });
    await this.openNew(deviceId, userId, vehicleId, from);
    return device;
  }

  /**
   * Replaces a device: its open association ends on `effectiveDate` and the new device takes over the
   * same user and vehicle from that day. The old device becomes Inactive. Returns the new device.
   */
  replace(oldIdIn: unknown, input: { newDeviceId?: unknown; effectiveDate?: unknown; type?: unknown }): Promise<RegisteredDevice> {
    const oldId = checkId(oldIdIn, 'deviceId');
    const newId = checkId(input.newDeviceId, 'newDeviceId');
    const on = checkDate(input.effectiveDate, 'effectiveDate');
    if (newId === oldId) throw badInput('newDeviceId must differ from the device being replaced', 'newDeviceId');
    return inTransaction(this.em, async (tx) => {
      const svc = new RegisteredDeviceService(tx);
      const old = await svc.get(oldId);
      const open = await svc.openAssociation(oldId);
      if (!open) throw conflict(`Device '${oldId}' has no current association to hand over`, { deviceId: oldId });
      if (open.userId) await new RegisteredUserService(tx).requireActive(open.userId, 'new devices');
      const replacement = await svc.ensureDevice(newId, input.type ?? old.type);
      const newOpen = await svc.openAssociation(newId);
      if (newOpen) throw conflict(`Device '${newId}' is already in use`, { field: 'newDeviceId' });
      await svc.endOpen(open, on, 'replaced', 'effectiveDate');
      const oldStatus = old.status;
      old.status = 'Inactive';
      old.replacedByDeviceId = newId;
      replacement.replacesDeviceId = oldId;
      recordDeviceStatusEvent(tx, old, oldStatus);
      await svc.openNew(newId, open.userId ?? null, open.vehicleId ?? null, on);
      return replacement;
    });
  }

  /** Replaces the user's only active device; several active devices make the request ambiguous (400). */
  async replaceUsersOnly(userIdIn: unknown, input: { newDeviceId?: unknown; effectiveDate?: unknown; type?: unknown }): Promise<RegisteredDevice> {
    const userId = checkId(userIdIn, 'userId');
    checkId(input.newDeviceId, 'newDeviceId');
    checkDate(input.effectiveDate, 'effectiveDate');
    await new RegisteredUserService(this.em).get(userId);
    const open = await this.em.find(DeviceAssociation, { userId, effectiveTo: null });
    const devices = open.length ? await this.em.find(RegisteredDevice, { deviceId: { $in: open.map((a) => a.deviceId) }, status: 'Active' }) : [];
    if (devices.length > 1) {
      throw badInput(`User '${userId}' has ${devices.length} active devices (${devices.map((d) => d.deviceId).sort().join(', ')}); replace one with PUT /devices/{deviceId}`, 'userId', { activeDevices: devices.map((d) => d.deviceId).sort() });
    }
    if (!devices.length) throw conflict(`User '${userId}' has no active device to replace`, { userId });
    return this.replace(devices[0]!.deviceId, input);
  }

  /** Sets the end date of the device's open association with the user. */
  endAssociation(userIdIn: unknown, deviceIdIn: unknown, endDate: unknown): Promise<DeviceAssociation> {
    const userId = checkId(userIdIn, 'userId');
    const deviceId = checkId(deviceIdIn, 'deviceId');
    const on = checkDate(endDate, 'effectiveEndDate');
    return inTransaction(this.em, async (tx) => {
      const svc = new RegisteredDeviceService(tx);
      await new RegisteredUserService(tx).get(userId);
      await svc.get(deviceId);
      const open = await svc.openAssociation(deviceId);
      if (!open || open.userId !== userId) throw notFound('Open association of device with user', `${deviceId}/${userId}`);
      await svc.endOpen(open, on, 'ended', 'effectiveEndDate');
      return open;
    });
  }

  async setStatus(deviceIdIn: unknown, status: unknown): Promise<RegisteredDevice> {
    const deviceId = checkId(deviceIdIn, 'deviceId');
    const parsed = oneOf(DEVICE_STATUSES, status, 'status');
    const device = await this.get(deviceId);
    const previous = device.status;
    device.status = parsed;
    recordDeviceStatusEvent(this.em, device, previous);
    await this.em.flush();
    return device;
  }
}
