import { badInput } from '../platform/errors.ts';
import { closedBody, defined, objectBody, pick, queryString } from '../platform/rest/body.ts';
import { found, typedRoute } from '../platform/rest/operation.ts';
import type { JsonSchema, RestRequest, RestRoute } from '../platform/rest/types.ts';
import { PRODUCT_SUBJECTS, type ProductName } from './rules.ts';
import { VIN_PATTERN } from '../platform/scalars.ts';
import {
  restAssociation, restConsent, restDevice, restRegistration, restReplacement, restUser, restVehicle,
} from './representation.ts';
import {
  AssignRegisteredDevice, AssociateRegisteredDeviceWithVehicle, CreateRegisteredVehicle,
  CreateRegisteredVehicleWithDevices, EndRegisteredDeviceAssociation, RecordConsent, RegisterUser, RegisterUserProduct,
  RegisterUserProducts, RegisterVehicleProduct, RegisteredDevice, RegisteredDevicesByUser, RegisteredUser,
  RegisteredUserByDevice, RegisteredVehicle, RegistrationConsents, ReplaceRegisteredDevice, ReplaceRegisteredUserDevice,
  SetRegisteredDeviceStatus, SetRegisteredUserActivation, UnenrollUserProduct, UpdateRegisteredVehicle,
} from './rest.generated.ts';

export const REGISTRATION_PREFIX = '/registration/v2';
const P = REGISTRATION_PREFIX;
const TAG_DEVICES = 'Registration: devices';
const TAG_VEHICLES = 'Registration: vehicles';
const TAG_USERS = 'Registration: users';
const TAG_PRODUCTS = 'Registration: user products';
const TAG_CONSENTS = 'Registration: consents';

type Row = Record<string, unknown>;

// ---- request mapping ----

/** A string body field (or absent); anything else is a 400 naming the field. */
function str(body: Row, field: string, ...aliases: string[]): string | undefined {
  const value = pick(body, field, ...aliases);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badInput(`${field} must be a string`, field);
  return value;
}

function required(body: Row, field: string, ...aliases: string[]): string {
  const value = str(body, field, ...aliases);
  if (value === undefined || value.trim() === '') throw badInput(`${field} is required`, field);
  return value;
}

/** `mobile` / `obd` in any case, as the GraphQL enum. */
function deviceType(value: unknown, field = 'type'): string | undefined {
  if (value == null) return undefined;
  if (typeof value !== 'string' || !/^(mobile|obd)$/i.test(value.trim())) {
    throw badInput(`${field} must be mobile or obd`, field);
  }
  return value.trim().toUpperCase();
}

function deviceStatus(value: unknown): string {
  if (typeof value !== 'string' || !/^(active|inactive)$/i.test(value.trim())) {
    throw badInput('status must be Active or Inactive', 'status');
  }
  return value.trim().toUpperCase();
}

function associationInput(req: RestRequest) {
  const body = objectBody(req);
  return defined({ effectiveDate: str(body, 'effectiveDate'), type: deviceType(body.type) });
}

function replaceInput(req: RestRequest) {
  const body = objectBody(req);
  return defined({
    newDeviceId: required(body, 'newDeviceId'), effectiveDate: required(body, 'effectiveDate'),
    type: deviceType(body.type),
  });
}

/** `status` (Active/Inactive) or `active` (boolean), `reason`, `effectiveDate`. */
function activationInput(req: RestRequest) {
  const body = objectBody(req);
  let status: string | undefined;
  if (body.status != null) status = deviceStatus(body.status);
  if (body.active != null) {
    if (typeof body.active !== 'boolean') throw badInput('active must be true or false', 'active');
    const fromActive = body.active ? 'ACTIVE' : 'INACTIVE';
    if (status && status !== fromActive) throw badInput('active contradicts status', 'active');
    status = fromActive;
  }
  return defined({ status, reason: str(body, 'reason'), effectiveDate: str(body, 'effectiveDate') });
}

function vehicleInput(body: Row) {
  const year = body.year;
  if (year != null && (typeof year !== 'number' || !Number.isInteger(year))) {
    throw badInput('year must be a whole number', 'year');
  }
  return defined({
    vehicleId: str(body, 'vehicleId'), vin: str(body, 'vin', 'VIN'), make: str(body, 'make'), model: str(body, 'model'),
    year: body.year === undefined ? undefined : year, userId: str(body, 'userId'),
  });
}

/** `devices: [{ deviceId, type }]` or `devices: ["id", ...]` (or `deviceIds`). */
function vehicleDevices(body: Row) {
  const list = pick(body, 'devices', 'deviceIds');
  if (!Array.isArray(list) || list.length === 0) {
    throw badInput('devices must be a non-empty list of { deviceId, type } or of device ids', 'devices');
  }
  return list.map((d, i) => {
    if (typeof d === 'string') return { deviceId: d };
    if (typeof d !== 'object' || d === null || Array.isArray(d)) {
      throw badInput('each device must be { deviceId, type } or a device id', `devices.${i}`);
    }
    const entry = d as Row;
    if (typeof entry.deviceId !== 'string') throw badInput('deviceId is required', `devices.${i}.deviceId`);
    return defined({ deviceId: entry.deviceId, type: deviceType(entry.type, `devices.${i}.type`) });
  });
}

function additionalParameters(body: Row) {
  const value = body.additionalParameters;
  if (value != null && (typeof value !== 'object' || Array.isArray(value))) {
    throw badInput('additionalParameters must be a JSON object', 'additionalParameters');
  }
  return value ?? null;
}

function consentInput(req: RestRequest) {
  const body = objectBody(req);
  let action: string | undefined;
  const rawAction = pick(body, 'action', 'status');
  if (rawAction != null) {
    if (typeof rawAction !== 'string' || !/^(granted|withdrawn)$/i.test(rawAction.trim())) {
      throw badInput('action must be granted or withdrawn', 'action');
    }
    action = rawAction.trim().toUpperCase();
  }
  if (body.granted != null) {
    if (typeof body.granted !== 'boolean') throw badInput('granted must be true or false', 'granted');
    const fromGranted = body.granted ? 'GRANTED' : 'WITHDRAWN';
    if (action && action !== fromGranted) throw badInput('granted contradicts action', 'granted');
    action = fromGranted;
  }
  if (!action) {
    throw badInput(
      'Say whether the consent is granted or withdrawn: granted (true|false) or action (granted|withdrawn)', 'granted',
    );
  }
  return defined({
    userId: required(body, 'userId'), type: required(body, 'type', 'consentType'), version: required(body, 'version'),
    action, timestamp: str(body, 'timestamp'), source: required(body, 'source'),
  });
}

function includeHistory(req: RestRequest) {
  const value = queryString(req, 'includeHistory');
  if (value === undefined) return false;
  if (!/^(true|false)$/i.test(value)) throw badInput('includeHistory must be true or false', 'includeHistory');
  return value.toLowerCase() === 'true';
}

// ---- OpenAPI documentation ----

const nullableString = { type: ['string', 'null'] };
const date = { type: 'string', format: 'date' };
const nullableDate = { type: ['string', 'null'], format: 'date' };
const dateTime = { type: 'string', format: 'date-time' };
const deviceTypeSchema = { type: 'string', enum: ['mobile', 'obd'] };
/** A device's or a user's status. */
const activeInactive = { type: 'string', enum: ['Active', 'Inactive'] };
const associationSchema: JsonSchema = {
  type: 'object',
  properties: {
    deviceId: { type: 'string' }, userId: nullableString, vehicleId: nullableString, effectiveFrom: date,
    effectiveTo: nullableDate,
    endReason: { type: ['string', 'null'], enum: ['ended', 'replaced', 'reassociated', null] },
    current: { type: 'boolean' },
  },
};
const deviceSchema: JsonSchema = {
  type: 'object',
  properties: {
    deviceId: { type: 'string' }, type: deviceTypeSchema, status: activeInactive,
    userId: nullableString, vehicleId: nullableString, effectiveDate: nullableDate,
    effectiveEndDate: nullableDate, replacedByDeviceId: nullableString, replacesDeviceId: nullableString,
    history: { type: 'array', items: associationSchema }, createdAt: dateTime, updatedAt: dateTime,
  },
  required: ['deviceId', 'type', 'status', 'history'],
};
/** Partner-defined parameters of a registration: any JSON object, stored and answered as sent. */
const additionalParametersSchema: JsonSchema = {
  type: ['object', 'null'], additionalProperties: true,
  description: 'Partner-defined parameters, any JSON object, kept as sent',
};
/**
 * A product name as the registration service reads it: any case, spaces, dashes or underscores anywhere
 * ("driving-behavior" is "Driving Behavior").
 */
function productNameParam(subject: 'user' | 'vehicle'): JsonSchema & { description: string } {
  const names = (Object.keys(PRODUCT_SUBJECTS) as ProductName[])
    .filter((n) => (PRODUCT_SUBJECTS[n] as readonly string[]).includes(subject));
  const loose = (name: string) => [...name.toLowerCase().replace(/[^a-z0-9]/g, '')]
    .map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join('[^A-Za-z0-9]*');
  return {
    pattern: `^[^A-Za-z0-9]*(${names.map(loose).join('|')})[^A-Za-z0-9]*$`, example: names[0],
    description: `A product a ${subject} can be registered for: ${names.join(', ')}. `
      + 'Case, spaces, dashes and underscores do not matter (driving-behavior); another name is 400.',
  };
}
const registrationSchema: JsonSchema = {
  type: 'object',
  properties: {
    registrationId: { type: 'string' }, productName: { type: 'string' }, userId: nullableString,
    vehicleId: nullableString,
    status: { type: 'string', enum: ['enrolled', 'unenrolled'] }, additionalParameters: additionalParametersSchema,
    registeredAt: dateTime, unenrolledAt: { type: ['string', 'null'], format: 'date-time' },
  },
};
const userSchema: JsonSchema = {
  type: 'object',
  properties: {
    userId: { type: 'string' }, status: activeInactive, active: { type: 'boolean' },
    activationReason: nullableString, activationEffectiveDate: nullableDate,
    deviceIds: { type: 'array', items: { type: 'string' } }, products: { type: 'array', items: registrationSchema },
    createdAt: dateTime, updatedAt: dateTime,
  },
  required: ['userId', 'status', 'active'],
};
const vehicleSchema: JsonSchema = {
  type: 'object',
  properties: {
    vehicleId: { type: 'string' }, vin: { type: ['string', 'null'], pattern: VIN_PATTERN.source }, make: nullableString,
    model: nullableString, year: { type: ['integer', 'null'] },
    userId: nullableString,
    devices: {
      type: 'array',
      items: {
        type: 'object', properties: { deviceId: { type: 'string' }, type: deviceTypeSchema, status: activeInactive },
        required: ['deviceId', 'type', 'status'],
      },
    },
    products: { type: 'array', items: registrationSchema },
    createdAt: dateTime, updatedAt: dateTime,
  },
  required: ['vehicleId', 'vin', 'make', 'model', 'year', 'userId', 'devices', 'products', 'createdAt', 'updatedAt'],
};
const vehicleInputSchema: JsonSchema = closedBody({
  type: 'object',
  properties: {
    vehicleId: { type: ['string', 'null'], description: 'Optional on creation; generated when absent' },
    vin: { type: ['string', 'null'], pattern: '^[A-Za-z0-9]{17}$' }, make: nullableString, model: nullableString,
    year: { type: ['integer', 'null'] },
    userId: { type: ['string', 'null'], description: 'The vehicle\'s user; must exist' },
  },
}, { VIN: 'vin' });
const consentSchema: JsonSchema = {
  type: 'object',
  properties: {
    consentId: { type: 'string' }, userId: { type: 'string' }, type: { type: 'string' }, version: { type: 'string' },
    action: { type: 'string', enum: ['granted', 'withdrawn'] }, granted: { type: 'boolean' }, timestamp: dateTime,
    source: { type: 'string' }, recordedAt: dateTime,
  },
};
const replaceBody: JsonSchema = closedBody({
  type: 'object',
  properties: { newDeviceId: { type: 'string' }, effectiveDate: date, type: deviceTypeSchema },
  required: ['newDeviceId', 'effectiveDate'],
});
const replaceResponse: JsonSchema = {
  type: 'object',
  properties: {
    deviceId: { type: 'string' }, type: deviceTypeSchema, replacesDeviceId: { type: 'string' }, effectiveDate: date,
  },
  required: ['deviceId', 'type'],
};
const associationBody: JsonSchema = closedBody({
  type: 'object',
  properties: {
    effectiveDate: { ...date, description: 'First day of the association; today when absent' },
    type: { ...deviceTypeSchema, description: 'For a new device; mobile by default' },
  },
});
const activationBody: JsonSchema = closedBody({
  type: 'object',
  properties: {
    status: { ...activeInactive, description: 'Any case; or use `active`' }, active: { type: 'boolean' },
    reason: { type: ['string', 'null'] }, effectiveDate: { ...date, description: 'Today when absent' },
  },
});
/** The body of a product registration: its partner-defined parameters. */
const additionalParametersBody = closedBody({
  type: 'object', properties: { additionalParameters: additionalParametersSchema },
});
const deviceDocs = { response: deviceSchema };

// ---- the table ----


const b2b = { scope: 'b2b' as const };

export const registrationRoutes: readonly RestRoute[] = [
  // Devices
  typedRoute(EndRegisteredDeviceAssociation, {
    ...b2b, method: 'PUT', path: `${P}/users/:userId/devices/:deviceId`, operationId: 'endUserDeviceAssociation',
    tag: TAG_DEVICES, summary: 'Set the effective end date of a device\'s association with the user',
    variables: (req) => {
      const effectiveEndDate = required(objectBody(req), 'effectiveEndDate', 'effectiveDate', 'endDate');
      return { userId: req.params.userId, deviceId: req.params.deviceId, effectiveEndDate };
    },
    result: (d) => restAssociation(d.endRegisteredDeviceAssociation),
    docs: {
      description: 'The association ends on that day (exclusive); it may lie in the future. '
        + 'Its row is kept in the device history.',
      requestBody: closedBody(
        { type: 'object', properties: { effectiveEndDate: date }, required: ['effectiveEndDate'] },
        { effectiveDate: 'effectiveEndDate', endDate: 'effectiveEndDate' },
      ),
      requestExample: { effectiveEndDate: '2026-12-31' }, response: associationSchema,
    },
  }),
  typedRoute(AssociateRegisteredDeviceWithVehicle, {
    ...b2b, method: 'PUT', path: `${P}/devices/:deviceId/vehicle/:vehicleId`, operationId: 'associateDeviceWithVehicle',
    tag: TAG_DEVICES, summary: 'Associate a device with a vehicle (the user, if any, stays); creates an unknown device',
    variables: (req) => ({
      deviceId: req.params.deviceId, vehicleId: req.params.vehicleId, input: associationInput(req),
    }),
    result: (d) => restDevice(d.associateRegisteredDeviceWithVehicle),
    docs: { ...deviceDocs, requestBody: associationBody, requestExample: { effectiveDate: '2026-11-01' } },
  }),
  typedRoute(ReplaceRegisteredUserDevice, {
    ...b2b, method: 'PUT', path: `${P}/users/:userId/devices`, operationId: 'replaceUserDevice', tag: TAG_DEVICES,
    summary: 'Replace the user\'s only active device (400 when the user has several)',
    variables: (req) => ({ userId: req.params.userId, input: replaceInput(req) }),
    result: (d) => restReplacement(d.replaceRegisteredUserDevice),
    docs: {
      requestBody: replaceBody, requestExample: { effectiveDate: '2026-11-20', newDeviceId: '356938035643810' },
      response: replaceResponse,
    },
  }),
  typedRoute(AssignRegisteredDevice, {
    ...b2b, method: 'PUT', path: `${P}/devices/:deviceId/users/:userId`, operationId: 'assignDeviceToUser',
    tag: TAG_DEVICES,
    summary: 'Assign a device to a user, or move it from another user (the vehicle stays); creates an unknown device',
    variables: (req) => ({ deviceId: req.params.deviceId, userId: req.params.userId, input: associationInput(req) }),
    result: (d) => restDevice(d.assignRegisteredDevice),
    docs: {
      ...deviceDocs, requestBody: associationBody, requestExample: { effectiveDate: '2026-11-01', type: 'mobile' },
    },
  }),
  typedRoute(SetRegisteredDeviceStatus, {
    ...b2b, method: 'PUT', path: `${P}/devices/:deviceId/status`, operationId: 'setDeviceStatus', tag: TAG_DEVICES,
    summary: 'Set a device\'s status: Active or Inactive',
    variables: (req) => ({ deviceId: req.params.deviceId, status: deviceStatus(objectBody(req).status) }),
    result: (d) => restDevice(d.setRegisteredDeviceStatus),
    docs: {
      ...deviceDocs,
      requestBody: closedBody({
        type: 'object', properties: { status: { ...activeInactive, description: 'Any case' } }, required: ['status'],
      }),
      requestExample: { status: 'Inactive' },
    },
  }),
  typedRoute(RegisteredDevicesByUser, {
    ...b2b, method: 'GET', path: `${P}/devices/users/:userId`, operationId: 'getUserDevices', tag: TAG_DEVICES,
    summary: 'The devices currently associated with a user (with includeHistory=true, every device ever)',
    variables: (req) => ({ userId: req.params.userId, includeEnded: includeHistory(req) }),
    result: (d, req) => ({ userId: req.params.userId, devices: d.registeredDevicesByUser.map(restDevice) }),
    docs: {
      query: { includeHistory: { type: 'boolean', description: 'Also list devices whose association has ended' } },
      response: {
        type: 'object', properties: { userId: { type: 'string' }, devices: { type: 'array', items: deviceSchema } },
      },
    },
  }),
  typedRoute(RegisteredDevice, {
    ...b2b, method: 'GET', path: `${P}/devices/:deviceId`, operationId: 'getDevice', tag: TAG_DEVICES,
    summary: 'A device with its current association and history',
    variables: (req) => ({ deviceId: req.params.deviceId }),
    result: (d, req) => restDevice(found(d.registeredDevice, 'RegisteredDevice', req.params.deviceId)),
    docs: deviceDocs,
  }),
  typedRoute(ReplaceRegisteredDevice, {
    ...b2b, method: 'PUT', path: `${P}/devices/:deviceId`, operationId: 'replaceDevice', tag: TAG_DEVICES,
    summary: 'Replace a device: the new device takes over its user and vehicle from effectiveDate',
    variables: (req) => ({ deviceId: req.params.deviceId, input: replaceInput(req) }),
    result: (d) => restReplacement(d.replaceRegisteredDevice),
    docs: {
      description: 'The old device\'s association ends on effectiveDate and it becomes Inactive; '
        + 'both rows stay in the history.',
      requestBody: replaceBody, requestExample: { effectiveDate: '2026-11-20', newDeviceId: '356938035643810' },
      response: replaceResponse,
    },
  }),
  // Vehicles
  typedRoute(CreateRegisteredVehicleWithDevices, {
    ...b2b, method: 'POST', path: `${P}/vehicles/devices`, operationId: 'createRegisteredVehicleWithDevices',
    tag: TAG_VEHICLES, status: 201,
    summary: 'Create a vehicle and associate new or unassociated devices with it, all or nothing',
    variables: (req) => {
      const body = objectBody(req);
      return {
        input: vehicleInput(body), devices: vehicleDevices(body), effectiveDate: str(body, 'effectiveDate') ?? null,
      };
    },
    result: (d) => restVehicle(d.createRegisteredVehicleWithDevices),
    docs: {
      requestBody: closedBody({
        ...vehicleInputSchema,
        properties: {
          ...(vehicleInputSchema.properties as object),
          devices: {
            type: 'array', minItems: 1, description: 'Devices as { deviceId, type } or as ids',
            items: {
              oneOf: [{
                type: 'object', properties: { deviceId: { type: 'string' }, type: deviceTypeSchema },
                required: ['deviceId'],
              }, { type: 'string' }],
            },
          },
          effectiveDate: date,
        },
        required: ['devices'],
      }, { deviceIds: 'devices' }),
      requestExample: {
        vehicleId: 'veh-42', vin: '1HGCM82633A004352', userId: 'driver-001',
        devices: [{ deviceId: 'obd-7781', type: 'obd' }],
      },
      response: vehicleSchema,
    },
  }),
  typedRoute(RegisteredVehicle, {
    ...b2b, method: 'GET', path: `${P}/vehicle/:vehicleId`, operationId: 'getRegisteredVehicle', tag: TAG_VEHICLES,
    summary: 'A vehicle with its devices and products',
    variables: (req) => ({ vehicleId: req.params.vehicleId }),
    result: (d, req) => restVehicle(found(d.registeredVehicle, 'RegisteredVehicle', req.params.vehicleId)),
    docs: { response: vehicleSchema },
  }),
  typedRoute(UpdateRegisteredVehicle, {
    ...b2b, method: 'PUT', path: `${P}/vehicle/:vehicleId`, operationId: 'updateRegisteredVehicle', tag: TAG_VEHICLES,
    summary: 'Change the vehicle fields sent (null clears one)',
    variables: (req) => ({ vehicleId: req.params.vehicleId, input: vehicleInput(objectBody(req)) }),
    result: (d) => restVehicle(d.updateRegisteredVehicle),
    docs: {
      requestBody: vehicleInputSchema, requestExample: { make: 'Honda', model: 'Civic' }, response: vehicleSchema,
    },
  }),
  typedRoute(RegisterVehicleProduct, {
    ...b2b, method: 'PUT', path: `${P}/product/:productName/vehicle/:vehicleId/register`,
    operationId: 'registerVehicleProduct', tag: TAG_VEHICLES,
    summary: 'Register a vehicle for a product (consents are those of the vehicle\'s user)',
    variables: (req) => ({
      vehicleId: req.params.vehicleId, productName: req.params.productName,
      additionalParameters: additionalParameters(objectBody(req)),
    }),
    result: (d) => restRegistration(d.registerVehicleProduct),
    docs: {
      params: { productName: productNameParam('vehicle') }, requestBody: additionalParametersBody,
      response: registrationSchema,
    },
  }),
  typedRoute(CreateRegisteredVehicle, {
    ...b2b, method: 'POST', path: `${P}/vehicles`, operationId: 'createRegisteredVehicle', tag: TAG_VEHICLES,
    status: 201,
    summary: 'Create a vehicle (id generated when absent)',
    variables: (req) => ({ input: vehicleInput(objectBody(req)) }),
    result: (d) => restVehicle(d.createRegisteredVehicle),
    docs: {
      requestBody: vehicleInputSchema,
      requestExample: { vehicleId: 'veh-42', vin: '1HGCM82633A004352', make: 'Honda', model: 'Accord', year: 2021 },
      response: vehicleSchema,
    },
  }),
  // Users
  typedRoute(RegisteredUser, {
    ...b2b, method: 'GET', path: `${P}/users/:userId`, operationId: 'getRegisteredUser', tag: TAG_USERS,
    summary: 'A user with activation, devices and products',
    variables: (req) => ({ userId: req.params.userId }),
    result: (d, req) => restUser(found(d.registeredUser, 'RegisteredUser', req.params.userId)),
    docs: { response: userSchema },
  }),
  typedRoute(RegisteredUserByDevice, {
    ...b2b, method: 'GET', path: `${P}/users/devices/:deviceId`, operationId: 'getUserByDevice', tag: TAG_USERS,
    summary: 'The user a device currently belongs to',
    variables: (req) => ({ deviceId: req.params.deviceId }),
    result: (d, req) => restUser(found(d.registeredUserByDevice, 'RegisteredUser for device', req.params.deviceId)),
    docs: { response: userSchema },
  }),
  typedRoute(RegisterUser, {
    ...b2b, method: 'POST', path: `${P}/users`, operationId: 'createRegisteredUser', tag: TAG_USERS, status: 201,
    summary: 'Create a user (id generated when absent)',
    variables: (req) => {
      const body = objectBody(req);
      const userId = pick(body, 'userId', 'userID');
      if (userId != null && typeof userId !== 'string') throw badInput('userId must be a string', 'userId');
      return { input: defined({ userId: userId ?? undefined }) };
    },
    result: (d) => ({ userId: d.registerUser.userId }),
    docs: {
      requestBody: closedBody({
        type: 'object',
        properties: { userId: { type: ['string', 'null'], description: 'Generated when absent or null' } },
      }, { userID: 'userId' }),
      requestExample: { userId: 'driver-001' },
      response: { type: 'object', properties: { userId: { type: 'string' } }, required: ['userId'] },
    },
  }),
  typedRoute(SetRegisteredUserActivation, {
    ...b2b, method: 'PUT', path: `${P}/users/:userId/activation`, operationId: 'setUserActivation', tag: TAG_USERS,
    summary: 'Set the activation (status required; absent reason cleared, absent date today)',
    variables: (req) => {
      const input = activationInput(req);
      if (!input.status) throw badInput('status (Active or Inactive) or active (true or false) is required', 'status');
      return { userId: req.params.userId, input, mode: 'REPLACE' };
    },
    result: (d) => restUser(d.setRegisteredUserActivation),
    docs: {
      description: 'A deactivated user cannot take new devices or products (409).',
      requestBody: activationBody, requestExample: { status: 'Inactive', reason: 'contract ended' },
      response: userSchema,
    },
  }),
  typedRoute(SetRegisteredUserActivation, {
    ...b2b, method: 'PATCH', path: `${P}/users/:userId/activation`, operationId: 'changeUserActivation', tag: TAG_USERS,
    summary: 'Change only the activation fields sent',
    variables: (req) => ({ userId: req.params.userId, input: activationInput(req), mode: 'MERGE' }),
    result: (d) => restUser(d.setRegisteredUserActivation),
    docs: { requestBody: activationBody, requestExample: { active: true }, response: userSchema },
  }),
  typedRoute(RegisterUserProducts, {
    ...b2b, method: 'POST', path: `${P}/users/products`, operationId: 'registerUserProducts', tag: TAG_PRODUCTS,
    status: 201,
    summary: 'Register a user for products, all or nothing (each product\'s consents must be granted)',
    variables: (req) => {
      const body = objectBody(req);
      const products = body.products;
      if (!Array.isArray(products) || products.length === 0 || products.some((p) => typeof p !== 'string')) {
        throw badInput('products must be a non-empty list of product names', 'products');
      }
      return { userId: required(body, 'userId'), products, additionalParameters: additionalParameters(body) };
    },
    result: (d, req) => ({ userId: objectBody(req).userId, products: d.registerUserProducts.map(restRegistration) }),
    docs: {
      description: 'Unknown product: 400. Missing consent: 409 naming it (missingConsents). '
        + 'Product un-enrolled before: 409.',
      requestBody: closedBody({
        type: 'object',
        properties: {
          userId: { type: 'string' },
          products: {
            type: 'array', minItems: 1, items: { type: 'string', pattern: productNameParam('user').pattern as string },
          },
          additionalParameters: additionalParametersSchema,
        },
        required: ['userId', 'products'],
      }),
      requestExample: {
        userId: 'driver-001', products: ['Driving Behavior'], additionalParameters: { programCode: 'FLEET-7' },
      },
      response: {
        type: 'object',
        properties: { userId: { type: 'string' }, products: { type: 'array', items: registrationSchema } },
      },
    },
  }),
  typedRoute(UnenrollUserProduct, {
    ...b2b, method: 'DELETE', path: `${P}/users/:userId/products/:productName`, operationId: 'unenrollUserProduct',
    tag: TAG_PRODUCTS, status: 204,
    summary: 'Un-enrol a user from a product (final: the product cannot be registered again)',
    variables: (req) => ({ userId: req.params.userId, productName: req.params.productName }), result: () => undefined,
    docs: { params: { productName: productNameParam('user') } },
  }),
  typedRoute(RegisterUserProduct, {
    ...b2b, method: 'POST', path: `${P}/users/:userId/products/:productName`, operationId: 'registerUserProduct',
    tag: TAG_PRODUCTS, status: 204,
    summary: 'Register a user for a product; refused (409) after un-enrolment or without the consents it needs',
    variables: (req) => ({
      userId: req.params.userId, productName: req.params.productName,
      additionalParameters: additionalParameters(objectBody(req)),
    }),
    result: () => undefined,
    docs: { params: { productName: productNameParam('user') }, requestBody: additionalParametersBody },
  }),
  // Consents
  typedRoute(RecordConsent, {
    ...b2b, method: 'POST', path: `${P}/consents`, operationId: 'recordConsent', tag: TAG_CONSENTS, status: 201,
    summary: 'Record a consent grant or withdrawal (append-only)',
    variables: (req) => ({ input: consentInput(req) }), result: (d) => restConsent(d.recordConsent),
    docs: {
      requestBody: closedBody({
        type: 'object',
        properties: {
          userId: { type: 'string' },
          type: {
            type: 'string', enum: ['location-tracking', 'driving-data-sharing', 'vehicle-data-collection', 'marketing'],
          },
          version: { type: 'string' }, granted: { type: 'boolean', description: 'Or action: granted | withdrawn' },
          action: { type: 'string', enum: ['granted', 'withdrawn'], description: 'Any case' },
          timestamp: { ...dateTime, description: 'Now when absent; not in the future' }, source: { type: 'string' },
        },
        required: ['userId', 'type', 'version', 'source'],
        anyOf: [{ required: ['granted'] }, { required: ['action'] }, { required: ['status'] }],
      }, { consentType: 'type', status: 'action' }),
      requestExample: {
        userId: 'driver-001', type: 'location-tracking', version: '2.1', granted: true,
        timestamp: '2026-11-01T09:01:00Z', source: 'mobile-app',
      },
      response: consentSchema,
    },
  }),
  typedRoute(RegistrationConsents, {
    ...b2b, method: 'GET', path: `${P}/consents/:userId`, operationId: 'getConsents', tag: TAG_CONSENTS,
    summary: 'A user\'s current consent per type and the full history',
    variables: (req) => ({ userId: req.params.userId }),
    result: ({ registrationConsents: { userId, current, history } }) => ({
      userId, consents: current.map(restConsent), history: history.map(restConsent),
    }),
    docs: {
      response: {
        type: 'object',
        properties: {
          userId: { type: 'string' }, consents: { type: 'array', items: consentSchema },
          history: { type: 'array', items: consentSchema },
        },
      },
    },
  }),
];
