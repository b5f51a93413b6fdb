import { defineEntity, p } from '@mikro-orm/core';
import { tenantProperties } from '../platform/db/tenant.ts';
import { WebhookOutbox } from '../platform/webhooks/outbox.ts';

/** The five rescue services; REST spells them tire, lockout, gas, tow, battery. */
export const RESCUE_SERVICES = ['TIRE', 'LOCKOUT', 'GAS', 'TOW', 'BATTERY'] as const;
export type RescueService = (typeof RESCUE_SERVICES)[number];

/** Lifecycle of a rescue: BOOKED -> EN_ROUTE -> APPROACHING -> ARRIVED_ONSITE -> COMPLETED, or CANCELLED. */
export const RESCUE_STATUSES = ['BOOKED', 'EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED', 'CANCELLED'] as const;
export type RescueStatus = (typeof RESCUE_STATUSES)[number];

export const TOW_LOCATION_TYPES = ['REPAIR_SHOP', 'DEALER'] as const;
export type TowLocationType = (typeof TOW_LOCATION_TYPES)[number];

/** A double precision column read back as a JS number. */
const num = () => p.double().runtimeType('number').$type<number>();

export interface KeyValue { key: string; value: string }

// ---------------------------------------------------------------- reference data (no orgId, shared)

export const VehicleModelSchema = defineEntity({
  name: 'VehicleModel',
  tableName: 'vehicle_models',
  uniques: [{ properties: ['makeKey', 'modelKey'], name: 'vehicle_models_make_model_unique' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    makeKey: p.string().length(64).index(),
    make: p.string().length(64),
    modelKey: p.string().length(128),
    model: p.string().length(128),
  },
});
export class VehicleModel extends VehicleModelSchema.class {}
VehicleModelSchema.setClass(VehicleModel);

export const RescueProviderSchema = defineEntity({
  name: 'RescueProvider',
  tableName: 'providers',
  properties: {
    providerId: p.string().length(64).primary(),
    name: p.string().length(255),
    phone: p.string().length(32),
    metro: p.string().length(64),
    state: p.string().length(2),
    latitude: num(),
    longitude: num(),
    /** Coverage: the provider serves points within this many miles of its base. */
    coverageMiles: num(),
    services: p.array(),
    /** IANA time zone of the opening hours. */
    timeZone: p.string().length(64),
    /** Local opening hours as HH:MM; both null means around the clock. */
    opensAt: p.string().length(5).nullable(),
    closesAt: p.string().length(5).nullable(),
    drivers: p.array(),
    active: p.boolean().default(true),
  },
});
export class RescueProvider extends RescueProviderSchema.class {}
RescueProviderSchema.setClass(RescueProvider);

export const TowLocationSchema = defineEntity({
  name: 'TowLocation',
  tableName: 'tow_locations',
  properties: {
    locationId: p.string().length(64).primary(),
    name: p.string().length(255),
    type: p.enum(TOW_LOCATION_TYPES),
    /** Makes a dealer sells and services (empty for independent shops). */
    brands: p.array(),
    address1: p.string().length(255),
    city: p.string().length(128),
    state: p.string().length(2),
    zip: p.string().length(10),
    phone: p.string().length(32),
    latitude: num(),
    longitude: num(),
  },
});
export class TowLocation extends TowLocationSchema.class {}
TowLocationSchema.setClass(TowLocation);

export const RescuePlanSchema = defineEntity({
  name: 'RescuePlan',
  tableName: 'plans',
  properties: {
    planCode: p.string().length(64).primary(),
    name: p.string().length(255),
    /** Claims per membership term, all services together. */
    maxClaimCount: p.integer(),
    /** Claims per term for each service, by REST type name (Gas, Tow, Changetire, Battery, Lockout). */
    serviceMaxClaims: p.json<Record<string, number>>(),
    fuelQty: num(),
    fuelQtyUnit: p.string().length(16),
    towMiles: num(),
    towToDealershipRequired: p.boolean().default(false),
  },
});
export class RescuePlan extends RescuePlanSchema.class {}
RescuePlanSchema.setClass(RescuePlan);

// ---------------------------------------------------------------- partner data (orgId, isolated)

export const RescueMemberSchema = defineEntity({
  name: 'RescueMember',
  tableName: 'members',
  uniques: [{ properties: ['orgId', 'partnerCode', 'memberId'], name: 'members_org_partner_member_unique' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    partnerCode: p.string().length(64),
    memberId: p.string().length(128),
    productType: p.string().length(64),
    firstName: p.string().length(128),
    lastName: p.string().length(128),
    address1: p.string().length(255).nullable(),
    address2: p.string().length(255).nullable(),
    city: p.string().length(128).nullable(),
    state: p.string().length(2).nullable(),
    zip: p.string().length(10).nullable(),
    emailAddress: p.string().length(255).nullable(),
    phone: p.string().length(32).nullable(),
    companyName: p.string().length(255).nullable(),
    effectiveEndDate: p.string().length(10).nullable(),
    milesPerTow: num().nullable(),
    numberOfEvents: p.integer().nullable(),
    partnerPay: p.boolean().default(false),
    serviceWeight: p.string().length(16).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export class RescueMember extends RescueMemberSchema.class {}
RescueMemberSchema.setClass(RescueMember);

export const RescueAssetSchema = defineEntity({
  name: 'RescueAsset',
  tableName: 'assets',
  uniques: [{ properties: ['orgId', 'partnerCode', 'memberId', 'assetIntegrationId'], name: 'assets_org_partner_member_asset_unique' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    partnerCode: p.string().length(64),
    memberId: p.string().length(128),
    assetIntegrationId: p.string().length(128),
    make: p.string().length(64).nullable(),
    model: p.string().length(128).nullable(),
    year: p.integer().nullable(),
    vin: p.string().length(17).nullable().index(),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export class RescueAsset extends RescueAssetSchema.class {}
RescueAssetSchema.setClass(RescueAsset);

export const RescueSessionSchema = defineEntity({
  name: 'RescueSession',
  tableName: 'sessions',
  properties: {
    sessionId: p.string().length(64).primary(),
    ...tenantProperties,
    appId: p.string().length(128),
    benefits: p.json<KeyValue[]>(),
    otherInfo: p.json<KeyValue[]>(),
    payPerUse: p.boolean().default(false),
    /** The member the benefit keys resolved to (member record id), if any. */
    memberRef: p.uuid().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export class RescueSession extends RescueSessionSchema.class {}
RescueSessionSchema.setClass(RescueSession);

export const RescueRequestSchema = defineEntity({
  name: 'RescueRequest',
  tableName: 'rescues',
  properties: {
    reqId: p.string().length(64).primary(),
    ...tenantProperties,
    sessionId: p.string().length(64).index(),
    memberRef: p.uuid().nullable().index(),
    service: p.enum(RESCUE_SERVICES),
    status: p.enum(RESCUE_STATUSES),
    payPerUse: p.boolean(),
    /** True while the rescue holds one of the member's claims (given back on cancel). */
    claimConsumed: p.boolean(),
    customer: p.json<Record<string, string | null>>(),
    vehicle: p.json<Record<string, string | number | null>>(),
    disablement: p.json<Record<string, string | number | null>>(),
    destination: p.json<Record<string, string | number | null>>().nullable(),
    details: p.json<Record<string, string | boolean | null>>(),
    cost: p.json<Record<string, number | boolean | string>>(),
    providerId: p.string().length(64),
    driverName: p.string().length(128),
    providerLatitude: num(),
    providerLongitude: num(),
    /** When the provider is expected on site. */
    etaAt: p.datetime(),
    cancelReason: p.string().length(500).nullable(),
    /** A sandbox organisation's rescue: the simulated provider moves it (sandbox/provider.ts). */
    sandbox: p.boolean().default(false),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export class RescueRequest extends RescueRequestSchema.class {}
RescueRequestSchema.setClass(RescueRequest);

export const RescueStatusEventSchema = defineEntity({
  name: 'RescueStatusEvent',
  tableName: 'status_events',
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    reqId: p.string().length(64).index(),
    status: p.enum(RESCUE_STATUSES),
    latitude: num().nullable(),
    longitude: num().nullable(),
    etaMinutes: p.integer().nullable(),
    note: p.string().length(500).nullable(),
    at: p.datetime(),
  },
});
export class RescueStatusEvent extends RescueStatusEventSchema.class {}
RescueStatusEventSchema.setClass(RescueStatusEvent);

export const RescueFeedbackSchema = defineEntity({
  name: 'RescueFeedback',
  tableName: 'feedback',
  uniques: [{ properties: ['orgId', 'reqId'], name: 'feedback_org_req_unique' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...tenantProperties,
    reqId: p.string().length(64),
    rating: p.integer(),
    comment: p.string().length(2000).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export class RescueFeedback extends RescueFeedbackSchema.class {}
RescueFeedbackSchema.setClass(RescueFeedback);

export const ProviderFileSchema = defineEntity({
  name: 'ProviderFile',
  tableName: 'provider_files',
  properties: {
    contentId: p.string().length(64).primary(),
    ...tenantProperties,
    reqId: p.string().length(64).nullable().index(),
    memberId: p.string().length(128).nullable().index(),
    fileType: p.string().length(32),
    fileName: p.string().length(255),
    contentType: p.string().length(128),
    size: p.integer(),
    sha256: p.string().length(64),
    data: p.type('blob').lazy(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export class ProviderFile extends ProviderFileSchema.class {}
ProviderFileSchema.setClass(ProviderFile);

export const roadsideEntities = [
  VehicleModel, RescueProvider, TowLocation, RescuePlan,
  RescueMember, RescueAsset, RescueSession, RescueRequest, RescueStatusEvent, RescueFeedback, ProviderFile, WebhookOutbox,
];
