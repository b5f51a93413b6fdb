import type { SubgraphContext } from '../platform/context.ts';
import { sandboxResetPart } from '../platform/db/sandbox-reset.ts';
import type { Consent, DeviceAssociation, ProductRegistration, RegisteredDevice, RegisteredUser, RegisteredVehicle } from './entities.ts';
import type { RegistrationLoaders } from './loaders.ts';
import { CONSENT_TYPES, PRODUCTS } from './products.ts';
import { checkId } from './services/common.ts';
import { ConsentService, currentConsents } from './services/consents.ts';
import { isCurrent, RegisteredDeviceService } from './services/devices.ts';
import { ProductRegistrationService } from './services/products.ts';
import { RegisteredUserService, type ActivationFields } from './services/users.ts';
import { RegisteredVehicleService, type VehicleFields } from './services/vehicles.ts';

type Ctx = SubgraphContext<RegistrationLoaders>;
type Args = Record<string, unknown>;
type AssociationInput = { effectiveDate?: string | null; type?: string | null } | null | undefined;
type ReplaceInput = { newDeviceId: string; effectiveDate: string; type?: string | null };

const users = (ctx: Ctx) => new RegisteredUserService(ctx.em);
const devices = (ctx: Ctx) => new RegisteredDeviceService(ctx.em);
const vehicles = (ctx: Ctx) => new RegisteredVehicleService(ctx.em);
const products = (ctx: Ctx) => new ProductRegistrationService(ctx.em);
const consents = (ctx: Ctx) => new ConsentService(ctx.em);

const upper = (value: string | null | undefined) => (value == null ? null : value.toUpperCase());
const nullToUndefined = (o: AssociationInput) => ({ effectiveDate: o?.effectiveDate ?? undefined, type: o?.type ?? undefined });

/** Devices of a list of associations, in order, without repeats, through the loader. */
async function devicesOf(associations: DeviceAssociation[], ctx: Ctx): Promise<RegisteredDevice[]> {
  const ids = [...new Set(associations.map((a) => a.deviceId))];
  return (await ctx.loaders.deviceById.loadMany(ids)).filter((d): d is RegisteredDevice => !!d && !(d instanceof Error));
}

const consentState = async (userId: string, ctx: Ctx) => {
  const history = await ctx.loaders.consentsByUser.load(userId);
  return { userId, history, current: currentConsents(history) };
};

export const resolvers = {
  SandboxReset: sandboxResetPart('registration'),
  Query: {
    registeredUser: (_: unknown, a: { userId: string }, ctx: Ctx) => ctx.loaders.userById.load(checkId(a.userId, 'userId')),
    registeredUserByDevice: async (_: unknown, a: { deviceId: string }, ctx: Ctx) => {
      const associations = await ctx.loaders.associationsByDevice.load(checkId(a.deviceId, 'deviceId'));
      const current = associations.filter((x) => x.userId && isCurrent(x)).at(-1);
      return current?.userId ? ctx.loaders.userById.load(current.userId) : null;
    },
    registeredDevice: (_: unknown, a: { deviceId: string }, ctx: Ctx) => ctx.loaders.deviceById.load(checkId(a.deviceId, 'deviceId')),
    registeredDevicesByUser: (_: unknown, a: { userId: string; includeEnded: boolean }, ctx: Ctx) =>
      devices(ctx).listForUser(checkId(a.userId, 'userId'), a.includeEnded),
    registeredVehicle: (_: unknown, a: { vehicleId: string }, ctx: Ctx) => ctx.loaders.vehicleById.load(checkId(a.vehicleId, 'vehicleId')),
    registrationConsents: (_: unknown, a: { userId: string }, ctx: Ctx) => consents(ctx).state(a.userId),
    registrationProducts: () => PRODUCTS,
    registrationConsentTypes: () => CONSENT_TYPES,
  },
  Mutation: {
    registerUser: (_: unknown, a: { input?: { userId?: string | null } | null }, ctx: Ctx) => users(ctx).create(a.input ?? {}),
    setRegisteredUserActivation: (_: unknown, a: { userId: string; input: ActivationFields; mode: 'REPLACE' | 'MERGE' }, ctx: Ctx) =>
      users(ctx).setActivation(a.userId, a.input, a.mode),
    assignRegisteredDevice: (_: unknown, a: { deviceId: string; userId: string; input?: AssociationInput }, ctx: Ctx) =>
      devices(ctx).assignToUser(a.deviceId, a.userId, nullToUndefined(a.input)),
    associateRegisteredDeviceWithVehicle: (_: unknown, a: { deviceId: string; vehicleId: string; input?: AssociationInput }, ctx: Ctx) =>
      devices(ctx).associateVehicle(a.deviceId, a.vehicleId, nullToUndefined(a.input)),
    replaceRegisteredDevice: (_: unknown, a: { deviceId: string; input: ReplaceInput }, ctx: Ctx) => devices(ctx).replace(a.deviceId, a.input),
    replaceRegisteredUserDevice: (_: unknown, a: { userId: string; input: ReplaceInput }, ctx: Ctx) => devices(ctx).replaceUsersOnly(a.userId, a.input),
    endRegisteredDeviceAssociation: (_: unknown, a: { userId: string; deviceId: string; effectiveEndDate: string }, ctx: Ctx) =>
      devices(ctx).endAssociation(a.userId, a.deviceId, a.effectiveEndDate),
    setRegisteredDeviceStatus: (_: unknown, a: { deviceId: string; status: string }, ctx: Ctx) => devices(ctx).setStatus(a.deviceId, a.status),
    createRegisteredVehicle: (_: unknown, a: { input?: (VehicleFields & { vehicleId?: unknown }) | null }, ctx: Ctx) => vehicles(ctx).create(a.input ?? {}),
    createRegisteredVehicleWithDevices: (_: unknown, a: { input?: (VehicleFields & { vehicleId?: unknown }) | null; devices: unknown[]; effectiveDate?: string | null }, ctx: Ctx) =>
      vehicles(ctx).createWithDevices({ ...(a.input ?? {}), devices: a.devices, effectiveDate: a.effectiveDate }),
    updateRegisteredVehicle: (_: unknown, a: { vehicleId: string; input: VehicleFields & { vehicleId?: unknown } }, ctx: Ctx) => vehicles(ctx).update(a.vehicleId, a.input),
    registerVehicleProduct: (_: unknown, a: Args, ctx: Ctx) => products(ctx).registerVehicle(a.vehicleId, a.productName, a.additionalParameters),
    registerUserProducts: (_: unknown, a: Args, ctx: Ctx) => products(ctx).registerUser(a.userId, a.products, a.additionalParameters),
    registerUserProduct: (_: unknown, a: Args, ctx: Ctx) => products(ctx).registerUserOne(a.userId, a.productName, a.additionalParameters),
    unenrollUserProduct: (_: unknown, a: Args, ctx: Ctx) => products(ctx).unenrollUser(a.userId, a.productName),
    recordConsent: (_: unknown, a: { input: Args }, ctx: Ctx) => consents(ctx).record(a.input),
  },
  RegisteredUser: {
    __resolveReference: (ref: { userId: string }, ctx: Ctx) => ctx.loaders.userById.load(ref.userId),
    status: (u: RegisteredUser) => upper(u.status),
    active: (u: RegisteredUser) => u.status === 'Active',
    devices: async (u: RegisteredUser, a: { includeEnded: boolean }, ctx: Ctx) =>
      devicesOf((await ctx.loaders.associationsByUser.load(u.userId)).filter((x) => a.includeEnded || isCurrent(x)), ctx),
    deviceAssociations: (u: RegisteredUser, _: Args, ctx: Ctx) => ctx.loaders.associationsByUser.load(u.userId),
    products: (u: RegisteredUser, _: Args, ctx: Ctx) => ctx.loaders.registrationsByUser.load(u.userId),
    consents: (u: RegisteredUser, _: Args, ctx: Ctx) => consentState(u.userId, ctx),
  },
  RegisteredDevice: {
    __resolveReference: (ref: { deviceId: string }, ctx: Ctx) => ctx.loaders.deviceById.load(ref.deviceId),
    type: (d: RegisteredDevice) => upper(d.type),
    status: (d: RegisteredDevice) => upper(d.status),
    currentAssociation: async (d: RegisteredDevice, _: Args, ctx: Ctx) =>
      (await ctx.loaders.associationsByDevice.load(d.deviceId)).filter((x) => isCurrent(x)).at(-1) ?? null,
    user: async (d: RegisteredDevice, _: Args, ctx: Ctx) => {
      const current = (await ctx.loaders.associationsByDevice.load(d.deviceId)).filter((x) => isCurrent(x)).at(-1);
      return current?.userId ? ctx.loaders.userById.load(current.userId) : null;
    },
    vehicle: async (d: RegisteredDevice, _: Args, ctx: Ctx) => {
      const current = (await ctx.loaders.associationsByDevice.load(d.deviceId)).filter((x) => isCurrent(x)).at(-1);
      return current?.vehicleId ? ctx.loaders.vehicleById.load(current.vehicleId) : null;
    },
    history: (d: RegisteredDevice, _: Args, ctx: Ctx) => ctx.loaders.associationsByDevice.load(d.deviceId),
  },
  RegisteredDeviceAssociation: {
    associationId: (a: DeviceAssociation) => a.id,
    endReason: (a: DeviceAssociation) => upper(a.endReason),
    current: (a: DeviceAssociation) => isCurrent(a),
  },
  RegisteredVehicle: {
    __resolveReference: (ref: { vehicleId: string }, ctx: Ctx) => ctx.loaders.vehicleById.load(ref.vehicleId),
    user: (v: RegisteredVehicle, _: Args, ctx: Ctx) => (v.userId ? ctx.loaders.userById.load(v.userId) : null),
    devices: async (v: RegisteredVehicle, _: Args, ctx: Ctx) =>
      devicesOf((await ctx.loaders.associationsByVehicle.load(v.vehicleId)).filter((x) => isCurrent(x)), ctx),
    deviceHistory: (v: RegisteredVehicle, _: Args, ctx: Ctx) => ctx.loaders.associationsByVehicle.load(v.vehicleId),
    products: (v: RegisteredVehicle, _: Args, ctx: Ctx) => ctx.loaders.registrationsByVehicle.load(v.vehicleId),
  },
  ProductRegistration: {
    __resolveReference: (ref: { registrationId: string }, ctx: Ctx) => ctx.loaders.registrationById.load(ref.registrationId),
    registrationId: (r: ProductRegistration) => r.id,
    status: (r: ProductRegistration) => upper(r.status),
  },
  Consent: {
    __resolveReference: (ref: { consentId: string }, ctx: Ctx) => ctx.loaders.consentById.load(ref.consentId),
    consentId: (c: Consent) => c.id,
    action: (c: Consent) => upper(c.action),
    granted: (c: Consent) => c.action === 'granted',
  },
};
