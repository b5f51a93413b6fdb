import {
  BATTERY_SERVICES, EMAIL_PATTERN, FILE_TYPES, FUEL_TYPES, KEYS_LOCATIONS, PHONE_PATTERN, PROVISIONING_LIMITS, SERVICE_WEIGHTS,
  STATE_CODE_PATTERN,
} from './rules.ts';
import { VIN_PATTERN, ZIP_PATTERN } from '../platform/scalars.ts';
import { answer, arrayOf, bool, component, date, dateTime, int, nullable, num, str } from '../platform/rest/components.ts';
import type { JsonSchema } from '../platform/rest/types.ts';

/** The OpenAPI shapes of the roadside answers and bodies (rest.ts), from the roadside SDL and services' rules. */

const uuid: JsonSchema = { type: 'string', format: 'uuid' };
const SERVICES = ['TIRE', 'LOCKOUT', 'GAS', 'TOW', 'BATTERY'];
/** Services as REST paths and answers spell them. */
export const REST_SERVICES = SERVICES.map((s) => s.toLowerCase());
/** Rescue statuses as REST spells them (EN_ROUTE is EN-ROUTE). */
export const REST_STATUSES = ['BOOKED', 'EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED', 'CANCELLED'];
const restStatus: JsonSchema = { type: 'string', enum: REST_STATUSES };
const pattern = (re: RegExp) => re.source;

export const position = component('Position', answer({ latitude: { type: 'number', minimum: -90, maximum: 90 }, longitude: { type: 'number', minimum: -180, maximum: 180 } }, { description: 'A point in degrees (WGS 84)' }));

/** A place sent in a body: latitude and longitude, and address details for the provider. */
export const locationInput = component('RescueLocationInput', {
  type: 'object', required: ['latitude', 'longitude'], description: 'A point with optional address details (aliases: lat, lon or lng, address or street, zipCode or postalCode)',
  properties: {
    latitude: { type: 'number', minimum: -90, maximum: 90 }, longitude: { type: 'number', minimum: -180, maximum: 180 },
    address1: nullable({ type: 'string', maxLength: 255 }), city: nullable({ type: 'string', maxLength: 128 }), state: nullable({ type: 'string', pattern: pattern(STATE_CODE_PATTERN) }),
    zip: nullable({ type: 'string', pattern: pattern(ZIP_PATTERN) }), landmark: nullable({ type: 'string', maxLength: 255 }),
  },
});

/** A place on a rescue as answered. */
export const location = component('RescueLocation', answer({
  latitude: num, longitude: num, address1: nullable(str), city: nullable(str), state: nullable(str), zip: nullable(str),
  landmark: nullable({ type: 'string', description: 'A landmark or the destination\'s name' }),
  towLocationId: nullable({ type: 'string', description: 'The tow-to location chosen, when the destination is one' }),
}, { description: 'A place on a rescue: the disablement spot or the tow destination' }));

export const cost = component('RescueCost', answer({
  service: { type: 'string', enum: SERVICES, description: 'The service priced (GraphQL spelling)' },
  towMiles: { type: 'number', description: 'Road miles towed (great-circle x 1.3); 0 for other services' },
  coveredMiles: { type: 'number', description: 'Tow miles the plan covers on this rescue' }, billableMiles: { type: 'number', description: 'Tow miles charged to the customer' },
  serviceFee: num, mileageFee: num, partsFee: { type: 'number', description: 'Fuel and parts (a replacement battery)' }, totalCost: num,
  coveredAmount: { type: 'number', description: 'The part the member\'s plan pays' }, customerPays: num,
  covered: { type: 'boolean', description: 'True when a plan claim covers the rescue' }, currency: { type: 'string', enum: ['USD'] }, payPerUse: bool,
}, { description: 'A price in USD: the total, what the plan covers and what the customer pays' }));

const providerFields: Record<string, JsonSchema> = {
  providerId: str, name: str, phone: str, metro: str, state: str, position,
  coverageMiles: { type: 'number', description: 'Coverage radius from the base, in miles' },
  services: arrayOf({ type: 'string', enum: SERVICES }),
  opensAt: nullable({ type: 'string', pattern: '^\\d{2}:\\d{2}$', description: 'Local opening time; null when open around the clock' }),
  closesAt: nullable({ type: 'string', pattern: '^\\d{2}:\\d{2}$', description: 'Local closing time; null when open around the clock' }),
  timeZone: { type: 'string', description: 'IANA time zone of the hours' },
};
export const provider = component('RescueProvider', answer(providerFields, { description: 'A roadside provider' }));

const vehicle = component('RescueVehicle', answer({ make: nullable(str), model: nullable(str), year: nullable(int), color: nullable(str), vin: nullable(str) }));

const statusEvent = component('RescueStatusEvent', answer({
  status: restStatus, at: dateTime, position: nullable(position), etaMinutes: nullable(int), note: nullable(str),
}, { description: 'One step of a rescue\'s status history' }));

export const serviceRequest = component('RescueServiceRequest', answer({
  requestId: uuid, sessionId: uuid, status: restStatus, serviceType: { type: 'string', enum: REST_SERVICES },
  consumer: answer({ firstName: nullable(str), lastName: nullable(str), phone: nullable(str), name: nullable({ type: 'string', description: 'First and last name' }) }),
  vehicle, cost, payPerUse: { type: 'boolean', description: 'True when the customer pays (no plan claim covers it)' }, requestCreationTime: dateTime,
  eta: nullable({ type: 'integer', description: 'Minutes until the provider arrives' }), etaTime: nullable(dateTime),
  disablementAddress: location, destinationAddress: nullable(location),
  details: answer({
    spareAvailable: nullable(bool), fuelType: nullable({ type: 'string', enum: FUEL_TYPES }), keysLocation: nullable({ type: 'string', enum: KEYS_LOCATIONS }),
    batteryService: nullable({ type: 'string', enum: BATTERY_SERVICES }), comments: nullable(str),
  }, { description: 'Service-specific details' }),
  provider: nullable(provider), driver: answer({ name: str, position }), cancelReason: nullable(str),
  statusHistory: arrayOf(statusEvent), updatedTime: dateTime,
}, { description: 'A rescue request: its service, vehicle, places, provider, ETA, cost and status history' }));

export const vehicleInput = component('RescueVehicleInput', {
  type: 'object', description: 'The vehicle; omitted fields come from the member\'s provisioned asset (alias: colour for color, VIN for vin)',
  properties: {
    make: { type: 'string', maxLength: 64, description: 'A known make, any case (GET /vehicle/makes)' }, model: { type: 'string', maxLength: 64 },
    year: { type: 'integer', minimum: 1900, description: 'Up to next year' }, color: { type: 'string', maxLength: 64 }, vin: { type: 'string', pattern: pattern(VIN_PATTERN) },
  },
});

export const customerInput = component('RescueCustomerInput', {
  type: 'object', description: 'The person to contact; omitted fields come from the member (alias: consumer; phoneNumber for phone)',
  properties: { firstName: { type: 'string', maxLength: 128 }, lastName: { type: 'string', maxLength: 128 }, phone: { type: 'string', maxLength: 128 } },
});

export const feedbackAnswer = answer({
  status: { type: 'string', const: 'OK' }, message: str, requestId: uuid, rating: { type: 'integer', minimum: 1, maximum: 5 }, comment: nullable(str), createdAt: dateTime,
});

export const etaAnswer = answer({
  requestId: uuid, status: restStatus, eta: nullable({ type: 'integer', description: 'Minutes until the provider arrives' }), etaTime: nullable(dateTime),
  providerPosition: position, distanceMiles: { type: 'number', description: 'Great-circle miles from the provider to the vehicle' },
});

export const providersAnswer = answer({
  requestId: uuid, status: restStatus,
  providers: arrayOf(answer({
    ...providerFields,
    distanceMiles: { type: 'number', description: 'Great-circle miles from the provider\'s base to the vehicle' }, etaMinutes: { type: 'integer', description: 'Minutes to arrive if dispatched now' },
    openNow: bool, assigned: { type: 'boolean', description: 'This is the provider dispatched to the rescue' }, driver: nullable({ type: 'string', description: 'The driver, for the provider assigned' }),
  })),
});

export const availabilityAnswer = answer({
  latitude: num, longitude: num, available: { type: 'boolean', description: 'True when any service asked for is available' }, checkedAt: dateTime,
  services: arrayOf(answer({
    service: { type: 'string', enum: REST_SERVICES }, available: bool, providerCount: int,
    nearestProviderMiles: nullable(num), etaMinutes: nullable({ type: 'integer', description: 'Minutes for the nearest open provider' }),
  })),
});

export const towLocationsAnswer = answer({
  locations: arrayOf(answer({
    locationId: str, name: str, type: { type: 'string', enum: ['REPAIR_SHOP', 'DEALER'] }, brands: arrayOf(str, { description: 'Makes a dealer sells' }),
    address1: str, city: str, state: str, zip: str, phone: str, position, distanceMiles: nullable(num),
  })),
});

export const fileTypeSchema: JsonSchema = { type: 'string', enum: [...FILE_TYPES], description: 'Any case; a dash or space for _' };
export const file = component('RescueProviderFile', answer({
  contentId: uuid, reqId: nullable(uuid), memberId: nullable(str), fileType: { type: 'string', enum: [...FILE_TYPES] }, fileName: str,
  contentType: str, size: { type: 'integer', description: 'Bytes' }, sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' }, createdAt: dateTime,
}, { description: 'A provider file\'s metadata (GET /provider/fileservice/retrieve/{contentId} answers its bytes)' }));

const L = PROVISIONING_LIMITS;
/** The provisioning fields a form post or JSON body may set (also on update). */
const provisioningFields: Record<string, JsonSchema> = {
  productType: { type: 'string', description: 'The plan code (BASIC, PLUS, PREMIER, OEM), any case' },
  firstName: { type: 'string', minLength: 1, maxLength: L.firstName }, lastName: { type: 'string', minLength: 1, maxLength: L.lastName },
  address1: { type: 'string', maxLength: L.address1 }, address2: { type: 'string', maxLength: L.address2 }, city: { type: 'string', maxLength: L.city },
  state: { type: 'string', pattern: pattern(STATE_CODE_PATTERN) }, zip: { type: 'string', pattern: pattern(ZIP_PATTERN) },
  emailAddress: { type: 'string', pattern: pattern(EMAIL_PATTERN), maxLength: L.emailAddress }, phone: { type: 'string', pattern: pattern(PHONE_PATTERN) },
  companyName: { type: 'string', maxLength: L.companyName }, make: { type: 'string', maxLength: L.make }, model: { type: 'string', maxLength: L.model },
  year: { type: 'integer', minimum: 1900, description: 'Up to next year' }, vin: { type: 'string', pattern: pattern(VIN_PATTERN) },
  effectiveEndDate: date, milesPerTow: { type: 'number', minimum: 0, maximum: 500, description: 'Overrides the plan' },
  numberOfEvents: { type: 'integer', minimum: 0, maximum: 100, description: 'Overrides the plan' },
  partnerPay: { type: ['boolean', 'string'], enum: [true, false, 'Y', 'N', 'true', 'false'], description: 'Y/N or true/false, any case' },
  serviceWeight: { type: 'string', enum: SERVICE_WEIGHTS, description: 'Any case' },
};
const provisioningKeyFields: Record<string, JsonSchema> = {
  partnerCode: { type: 'string', minLength: 1, maxLength: 64 }, memberId: { type: 'string', minLength: 1, maxLength: 128 }, assetIntegrationId: { type: 'string', minLength: 1, maxLength: 128 },
};
export const provisioningInput: JsonSchema = {
  type: 'object', required: ['partnerCode', 'memberId', 'assetIntegrationId', 'firstName', 'lastName'],
  description: 'Empty form fields count as absent',
  properties: { ...provisioningKeyFields, ...provisioningFields },
};
export const provisioningUpdate: JsonSchema = { type: 'object', description: 'Only the fields sent change; empty form fields count as absent', properties: provisioningFields };
export const provisioning = component('RescueProvisioning', answer({
  partnerCode: str, memberId: str, assetIntegrationId: str, productType: str, firstName: str, lastName: str,
  address1: nullable(str), address2: nullable(str), city: nullable(str), state: nullable(str), zip: nullable(str), emailAddress: nullable(str), phone: nullable(str),
  companyName: nullable(str), make: nullable(str), model: nullable(str), year: nullable(int), vin: nullable(str), effectiveEndDate: nullable(date),
  milesPerTow: nullable(num), numberOfEvents: nullable(int), partnerPay: bool, serviceWeight: nullable({ type: 'string', enum: SERVICE_WEIGHTS }),
  status: { type: 'string', description: 'Active until effectiveEndDate, then Inactive' }, createdAt: dateTime, updatedAt: dateTime,
}, { description: 'A provisioned member and asset' }));
