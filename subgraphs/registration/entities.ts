import { defineEntity, p } from '@mikro-orm/core';
import { tenantProperties } from '../platform/db/tenant.ts';
import { WebhookOutbox } from '../platform/webhooks/outbox.ts';

export const ACTIVATION_STATUSES = ['Active', 'Inactive'] as const;
export type ActivationStatus = (typeof ACTIVATION_STATUSES)[number];
export const DEVICE_STATUSES = ['Active', 'Inactive'] as const;
export type DeviceStatus = (typeof DEVICE_STATUSES)[number];
export const DEVICE_TYPES = ['mobile', 'obd'] as const;
export type DeviceType = (typeof DEVICE_TYPES)[number];
/** Why an association ended: its end date was set, the device was replaced, or it moved to another user or vehicle. */
export const END_REASONS = ['ended', 'replaced', 'reassociated'] as const;
export type EndReason = (typeof END_REASONS)[number];
export const REGISTRATION_STATUSES = ['enrolled', 'unenrolled'] as const;
export type RegistrationStatus = (typeof REGISTRATION_STATUSES)[number];
export const CONSENT_ACTIONS = ['granted', 'withdrawn'] as const;
export type ConsentAction = (typeof CONSENT_ACTIONS)[number];

const timestamps = {
  createdAt: p.datetime().onCreate(() => new Date()),
  updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
};

/** A user known to the registration area (its own identity, not the scoring area's User). */
export const RegisteredUserSchema = defineEntity({
  name: 'RegisteredUser',
  tableName: 'registered_users',
  uniques: [{ properties: ['orgId', 'userId'], name: 'registered_users_org_user_unique' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    userId: p.string().length(255),
    status: p.enum(ACTIVATION_STATUSES).default('Active'),
    activationReason: p.string().length(500).nullable(),
    activationEffectiveDate: p.date().nullable(),
    ...timestamps,
  },
});
export class RegisteredUser extends RegisteredUserSchema.class {}
RegisteredUserSchema.setClass(RegisteredUser);

/** A device (phone or OBD-II unit). Its associations with users and vehicles live in DeviceAssociation. */
export const RegisteredDeviceSchema = defineEntity({
  name: 'RegisteredDevice',
  tableName: 'registered_devices',
  uniques: [{ properties: ['orgId', 'deviceId'], name: 'registered_devices_org_device_unique' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    deviceId: p.string().length(255),
    type: p.enum(DEVICE_TYPES).default('mobile'),
    status: p.enum(DEVICE_STATUSES).default('Active'),
    /** The device that replaced this one, and the one this one replaced. */
    replacedByDeviceId: p.string().length(255).nullable(),
    replacesDeviceId: p.string().length(255).nullable(),
    ...timestamps,
  },
});
export class RegisteredDevice extends RegisteredDeviceSchema.class {}
RegisteredDeviceSchema.setClass(RegisteredDevice);

/**
 * One period during which a device belonged to a user and/or a vehicle: `[effectiveFrom, effectiveTo)`.
 * Rows are never overwritten: a change ends the open row (sets effectiveTo once) and opens a new one.
 * The database keeps at most one open row per device (partial unique index).
 */
export const DeviceAssociationSchema = defineEntity({
  name: 'DeviceAssociation',
  tableName: 'device_associations',
  uniques: [{ properties: ['orgId', 'deviceId'], name: 'device_associations_one_open_per_device', where: 'effective_to is null' }],
  indexes: [
    { properties: ['orgId', 'userId'], name: 'device_associations_user_idx' },
    { properties: ['orgId', 'vehicleId'], name: 'device_associations_vehicle_idx' },
  ],
  checks: [
    { name: 'device_associations_subject_check', expression: 'user_id is not null or vehicle_id is not null' },
    { name: 'device_associations_period_check', expression: 'effective_to is null or effective_to >= effective_from' },
    // Periods of one device never overlap, even when an end date lies in the future (needs btree_gist).
    { name: 'device_associations_no_overlap', expression: "EXCLUDE USING gist (org_id WITH =, device_id WITH =, daterange(effective_from, effective_to, '[)'::text) WITH &&)" },
  ],
  // History is never rewritten: a row may only be ended once (effective_to, end_reason, ended_at), never deleted.
  triggers: [{
    name: 'history_kept', timing: 'before', events: ['update', 'delete'],
    body: "if tg_op = 'DELETE' or old.effective_to is not null or new.device_id <> old.device_id or new.org_id <> old.org_id"
      + ' or new.user_id is distinct from old.user_id or new.vehicle_id is distinct from old.vehicle_id or new.effective_from <> old.effective_from'
      + " then raise exception 'device association history is never rewritten' using errcode = 'restrict_violation'; end if; return new;",
  }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    deviceId: p.string().length(255),
    userId: p.string().length(255).nullable(),
    vehicleId: p.string().length(255).nullable(),
    effectiveFrom: p.date(),
    effectiveTo: p.date().nullable(),
    endReason: p.enum(END_REASONS).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    endedAt: p.datetime().nullable(),
  },
});
export class DeviceAssociation extends DeviceAssociationSchema.class {}
DeviceAssociationSchema.setClass(DeviceAssociation);

export const RegisteredVehicleSchema = defineEntity({
  name: 'RegisteredVehicle',
  tableName: 'registered_vehicles',
  uniques: [{ properties: ['orgId', 'vehicleId'], name: 'registered_vehicles_org_vehicle_unique' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    vehicleId: p.string().length(255),
    vin: p.string().length(17).nullable(),
    make: p.string().length(100).nullable(),
    model: p.string().length(100).nullable(),
    year: p.integer().nullable(),
    userId: p.string().length(255).nullable(),
    ...timestamps,
  },
});
export class RegisteredVehicle extends RegisteredVehicleSchema.class {}
RegisteredVehicleSchema.setClass(RegisteredVehicle);

/**
 * A product registration of a user or of a vehicle. One row per subject and product, ever: un-enrolment
 * marks the row, and the unique constraints make re-registration a conflict the database guards.
 */
export const ProductRegistrationSchema = defineEntity({
  name: 'ProductRegistration',
  tableName: 'product_registrations',
  uniques: [
    { properties: ['orgId', 'userId', 'productName'], name: 'product_registrations_user_unique' },
    { properties: ['orgId', 'vehicleId', 'productName'], name: 'product_registrations_vehicle_unique' },
  ],
  checks: [{ name: 'product_registrations_subject_check', expression: '(user_id is null) <> (vehicle_id is null)' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    productName: p.string().length(100),
    userId: p.string().length(255).nullable(),
    vehicleId: p.string().length(255).nullable(),
    status: p.enum(REGISTRATION_STATUSES).default('enrolled'),
    additionalParameters: p.json<Record<string, unknown>>().nullable(),
    registeredAt: p.datetime().onCreate(() => new Date()),
    unenrolledAt: p.datetime().nullable(),
  },
});
export class ProductRegistration extends ProductRegistrationSchema.class {}
ProductRegistrationSchema.setClass(ProductRegistration);

/** One consent event (grant or withdrawal). Append-only: the database refuses updates and deletes. */
export const ConsentSchema = defineEntity({
  name: 'Consent',
  tableName: 'consents',
  indexes: [{ properties: ['orgId', 'userId', 'type'], name: 'consents_user_type_idx' }],
  triggers: [{
    name: 'append_only', timing: 'before', events: ['update', 'delete'],
    body: "raise exception 'consent records are append-only' using errcode = 'restrict_violation';",
  }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    userId: p.string().length(255),
    type: p.string().length(100),
    version: p.string().length(50),
    action: p.enum(CONSENT_ACTIONS),
    timestamp: p.datetime(),
    source: p.string().length(100),
    recordedAt: p.datetime().onCreate(() => new Date()),
  },
});
export class Consent extends ConsentSchema.class {}
ConsentSchema.setClass(Consent);

export const registrationEntities = [RegisteredUser, RegisteredDevice, DeviceAssociation, RegisteredVehicle, ProductRegistration, Consent, WebhookOutbox];
