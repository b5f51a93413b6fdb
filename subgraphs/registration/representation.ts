import type {
  RegisteredDeviceStatus, RegistrationActivationStatus, RestAssociationFragment, RestConsentFragment,
  RestDeviceFragment, RestRegistrationFragment, RestReplacementFragment, RestUserFragment, RestVehicleFragment,
} from './rest.generated.ts';

/**
 * The REST body of each registration resource, one function each: REST answers feed them the GraphQL result,
 * events the stored entities, so that a webhook payload is what GET answers by construction.
 */

/** GraphQL's ACTIVE / INACTIVE as the documented `Active` / `Inactive`. */
const titleCase = (status: RegisteredDeviceStatus | RegistrationActivationStatus) =>
  status.charAt(0) + status.slice(1).toLowerCase();

/** A device's association with a user and/or a vehicle (the device history's rows): the end reason in lower case. */
export const restAssociation = (a: RestAssociationFragment) => ({
  deviceId: a.deviceId, userId: a.userId, vehicleId: a.vehicleId, effectiveFrom: a.effectiveFrom,
  effectiveTo: a.effectiveTo, endReason: a.endReason?.toLowerCase() ?? null, current: a.current,
});

/** A device: the type in lower case, the status as `Active` / `Inactive`, its current association flattened. */
export function restDevice(d: RestDeviceFragment) {
  const current = d.currentAssociation;
  return {
    deviceId: d.deviceId, type: d.type.toLowerCase(), status: titleCase(d.status),
    userId: current?.userId ?? null, vehicleId: current?.vehicleId ?? null,
    effectiveDate: current?.effectiveFrom ?? null, effectiveEndDate: current?.effectiveTo ?? null,
    replacedByDeviceId: d.replacedByDeviceId, replacesDeviceId: d.replacesDeviceId,
    history: d.history.map(restAssociation), createdAt: d.createdAt, updatedAt: d.updatedAt,
  };
}

/** The device that replaced another: from which day it took over. */
export const restReplacement = (d: RestReplacementFragment) => ({
  deviceId: d.deviceId, type: d.type.toLowerCase(), replacesDeviceId: d.replacesDeviceId,
  effectiveDate: d.currentAssociation?.effectiveFrom ?? null,
});

/** A user: the status as `Active` / `Inactive`, its devices by id, its products' status in lower case. */
export const restUser = (u: RestUserFragment) => ({
  userId: u.userId, status: titleCase(u.status), active: u.active, activationReason: u.activationReason,
  activationEffectiveDate: u.activationEffectiveDate,
  deviceIds: u.devices.map((d) => d.deviceId),
  products: u.products.map((p) => ({
    productName: p.productName, status: p.status.toLowerCase(), registeredAt: p.registeredAt,
    unenrolledAt: p.unenrolledAt,
  })),
  createdAt: u.createdAt, updatedAt: u.updatedAt,
});

/** A product registration of a user or a vehicle: the status in lower case. */
export const restRegistration = (r: RestRegistrationFragment) => ({
  registrationId: r.registrationId, productName: r.productName, userId: r.userId, vehicleId: r.vehicleId,
  status: r.status.toLowerCase(), additionalParameters: r.additionalParameters,
  registeredAt: r.registeredAt, unenrolledAt: r.unenrolledAt,
});

/** A vehicle with its devices (type in lower case, status as `Active` / `Inactive`) and products. */
export const restVehicle = (v: RestVehicleFragment) => ({
  vehicleId: v.vehicleId, vin: v.vin, make: v.make, model: v.model, year: v.year, userId: v.userId,
  createdAt: v.createdAt, updatedAt: v.updatedAt,
  devices: v.devices.map((d) => ({ deviceId: d.deviceId, type: d.type.toLowerCase(), status: titleCase(d.status) })),
  products: v.products.map(restRegistration),
});

/** A consent record: the action in lower case. */
export const restConsent = (c: RestConsentFragment) => ({
  consentId: c.consentId, userId: c.userId, type: c.type, version: c.version, action: c.action.toLowerCase(),
  granted: c.granted, timestamp: c.timestamp, source: c.source, recordedAt: c.recordedAt,
});
