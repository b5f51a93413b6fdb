import { badInput, notFound } from '../platform/errors.ts';
import { closedBody, defined, objectBody, pick, queryString } from '../platform/rest/body.ts';
import type { JsonSchema, RestRequest, RestRoute } from '../platform/rest/types.ts';
import { PRODUCT_SUBJECTS, type ProductName } from './rules.ts';
import { VIN_PATTERN } from '../platform/scalars.ts';

export const REGISTRATION_PREFIX = '/registration/v2';
const P = REGISTRATION_PREFIX;
const TAG_DEVICES = 'Registration: devices';
const TAG_VEHICLES = 'Registration: vehicles';
const TAG_USERS = 'Registration: users';
const TAG_PRODUCTS = 'Registration: user products';
const TAG_CONSENTS = 'Registration: consents';

// ---- GraphQL selections and the documented bodies built from them ----

const ASSOCIATION = 'associationId deviceId userId vehicleId effectiveFrom effectiveTo endReason current createdAt';
const DEVICE = `deviceId type status replacedByDeviceId replacesDeviceId createdAt updatedAt currentAssociation { ${ASSOCIATION} } history { ${ASSOCIATION} }`;
const USER = 'userId status active activationReason activationEffectiveDate createdAt updatedAt devices { deviceId } products { productName status registeredAt unenrolledAt }';
const REGISTRATION = 'registrationId productName userId vehicleId status additionalParameters registeredAt unenrolledAt';
const VEHICLE = `vehicleId vin make model year userId createdAt updatedAt devices { deviceId type status } products { ${REGISTRATION} }`;
const CONSENT = 'consentId userId type version action granted timestamp source recordedAt';

type Row = Record<string, unknown>;
const lower = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);
/** GraphQL's ACTIVE / INACTIVE as the documented `Active` / `Inactive`. */
const titleCase = (v: unknown) => (typeof v === 'string' ? v.charAt(0) + v.slice(1).toLowerCase() : v);

const restAssociation = (a: Row) => ({
  deviceId: a.deviceId, userId: a.userId, vehicleId: a.vehicleId, effectiveFrom: a.effectiveFrom, effectiveTo: a.effectiveTo,
  endReason: lower(a.endReason), current: a.current,
});

function restDevice(device: unknown, deviceId?: string): Row {
  if (!device) throw notFound('RegisteredDevice', deviceId ?? '');
  const d = device as Row;
  const current = d.currentAssociation as Row | null;
  return {
    deviceId: d.deviceId, type: lower(d.type), status: titleCase(d.status),
    userId: current?.userId ?? null, vehicleId: current?.vehicleId ?? null,
    effectiveDate: current?.effectiveFrom ?? null, effectiveEndDate: current?.effectiveTo ?? null,
    replacedByDeviceId: d.replacedByDeviceId, replacesDeviceId: d.replacesDeviceId,
    history: (d.history as Row[]).map(restAssociation), createdAt: d.createdAt, updatedAt: d.updatedAt,
  };
}

function restUser(user: unknown, userId?: string): Row {
  if (!user) throw notFound('RegisteredUser', userId ?? '');
  const u = user as Row;
  return {
    userId: u.userId, status: titleCase(u.status), active: u.active, activationReason: u.activationReason,
    activationEffectiveDate: u.activationEffectiveDate,
    deviceIds: (u.devices as Row[]).map((d) => d.deviceId),
    products: (u.products as Row[]).map((p) => ({ ...p, status: lower(p.status) })),
    createdAt: u.createdAt, updatedAt: u.updatedAt,
  };
}

const restRegistration = (r: Row) => ({ ...r, status: lower(r.status) });

function restVehicle(vehicle: unknown, vehicleId?: string): Row {
  if (!vehicle) throw notFound('RegisteredVehicle', vehicleId ?? '');
  const v = vehicle as Row;
  return {
    ...v,
    devices: (v.devices as Row[]).map((d) => ({ deviceId: d.deviceId, type: lower(d.type), status: titleCase(d.status) })),
    products: (v.products as Row[]).map(restRegistration),
  };
}

const restConsent = (c: Row) => ({ ...c, action: lower(c.action) });

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
  if (typeof value !== 'string' || !/^(mobile|obd)$/i.test(value.trim())) throw badInput(`${field} must be mobile or obd`, field);
  return value.trim().toUpperCase();
}

function deviceStatus(value: unknown): string {
  if (typeof value !== 'string' || !/^(active|inactive)$/i.test(value.trim())) throw badInput('status must be Active or Inactive', 'status');
  return value.trim().toUpperCase();
}

function associationInput(req: RestRequest) {
  const body = objectBody(req);
  return defined({ effectiveDate: str(body, 'effectiveDate'), type: deviceType(body.type) });
}

function replaceInput(req: RestRequest) {
  const body = objectBody(req);
  return defined({ newDeviceId: required(body, 'newDeviceId'), effectiveDate: required(body, 'effectiveDate'), type: deviceType(body.type) });
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
  if (year != null && (typeof year !== 'number' || !Number.isInteger(year))) throw badInput('year must be a whole number', 'year');
  return defined({
    vehicleId: str(body, 'vehicleId'), vin: str(body, 'vin', 'VIN'), make: str(body, 'make'), model: str(body, 'model'),
    year: body.year === undefined ? undefined : year, userId: str(body, 'userId'),
  });
}

/** `devices: [{ deviceId, type }]` or `devices: ["id", ...]` (or `deviceIds`). */
function vehicleDevices(body: Row) {
  const list = pick(body, 'devices', 'deviceIds');
  if (!Array.isArray(list) || list.length === 0) throw badInput('devices must be a non-empty list of { deviceId, type } or of device ids', 'devices');
  return list.map((d, i) => {
    if (typeof d === 'string') return { deviceId: d };
    if (typeof d !== 'object' || d === null || Array.isArray(d)) throw badInput('each device must be { deviceId, type } or a device id', `devices.${i}`);
    const entry = d as Row;
    if (typeof entry.deviceId !== 'string') throw badInput('deviceId is required', `devices.${i}.deviceId`);
    return defined({ deviceId: entry.deviceId, type: deviceType(entry.type, `devices.${i}.type`) });
  });
}

function additionalParameters(body: Row) {
  const value = body.additionalParameters;
  if (value != null && (typeof value !== 'object' || Array.isArray(value))) throw badInput('additionalParameters must be a JSON object', 'additionalParameters');
  return value ?? null;
}

function consentInput(req: RestRequest) {
  const body = objectBody(req);
  let action: string | undefined;
  const rawAction = pick(body, 'action', 'status');
  if (rawAction != null) {
    if (typeof rawAction !== 'string' || !/^(granted|withdrawn)$/i.test(rawAction.trim())) throw badInput('action must be granted or withdrawn', 'action');
    action = rawAction.trim().toUpperCase();
  }
  if (body.granted != null) {
    if (typeof body.granted !== 'boolean') throw badInput('granted must be true or false', 'granted');
    const fromGranted = body.granted ? 'GRANTED' : 'WITHDRAWN';
    if (action && action !== fromGranted) throw badInput('granted contradicts action', 'granted');
    action = fromGranted;
  }
  if (!action) throw badInput('Say whether the consent is granted or withdrawn: granted (true|false) or action (granted|withdrawn)', 'granted');
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
const associationSchema: JsonSchema = {
  type: 'object',
  properties: {
    deviceId: { type: 'string' }, userId: nullableString, vehicleId: nullableString, effectiveFrom: date,
    effectiveTo: { type: ['string', 'null'], format: 'date' }, endReason: { type: ['string', 'null'], enum: ['ended', 'replaced', 'reassociated', null] },
    current: { type: 'boolean' },
  },
};
const deviceSchema: JsonSchema = {
  type: 'object',
  properties: {
    deviceId: { type: 'string' }, type: { type: 'string', enum: ['mobile', 'obd'] }, status: { type: 'string', enum: ['Active', 'Inactive'] },
    userId: nullableString, vehicleId: nullableString, effectiveDate: { type: ['string', 'null'], format: 'date' },
    effectiveEndDate: { type: ['string', 'null'], format: 'date' }, replacedByDeviceId: nullableString, replacesDeviceId: nullableString,
    history: { type: 'array', items: associationSchema }, createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' },
  },
  required: ['deviceId', 'type', 'status', 'history'],
};
/** Partner-defined parameters of a registration: any JSON object, stored and answered as sent. */
const additionalParametersSchema: JsonSchema = { type: ['object', 'null'], additionalProperties: true, description: 'Partner-defined parameters, any JSON object, kept as sent' };
/** A product name as the registration service reads it: any case, spaces, dashes or underscores anywhere ("driving-behavior" is "Driving Behavior"). */
function productNameParam(subject: 'user' | 'vehicle'): JsonSchema & { description: string } {
  const names = (Object.keys(PRODUCT_SUBJECTS) as ProductName[]).filter((n) => (PRODUCT_SUBJECTS[n] as readonly string[]).includes(subject));
  const loose = (name: string) => [...name.toLowerCase().replace(/[^a-z0-9]/g, '')].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join('[^A-Za-z0-9]*');
  return {
    pattern: `^[^A-Za-z0-9]*(${names.map(loose).join('|')})[^A-Za-z0-9]*$`, example: names[0],
    description: `A product a ${subject} can be registered for: ${names.join(', ')}. Case, spaces, dashes and underscores do not matter (driving-behavior); another name is 400.`,
  };
}
const registrationSchema: JsonSchema = {
  type: 'object',
  properties: {
    registrationId: { type: 'string' }, productName: { type: 'string' }, userId: nullableString, vehicleId: nullableString,
    status: { type: 'string', enum: ['enrolled', 'unenrolled'] }, additionalParameters: additionalParametersSchema,
    registeredAt: { type: 'string', format: 'date-time' }, unenrolledAt: { type: ['string', 'null'], format: 'date-time' },
  },
};
const userSchema: JsonSchema = {
  type: 'object',
  properties: {
    userId: { type: 'string' }, status: { type: 'string', enum: ['Active', 'Inactive'] }, active: { type: 'boolean' },
    activationReason: nullableString, activationEffectiveDate: { type: ['string', 'null'], format: 'date' },
    deviceIds: { type: 'array', items: { type: 'string' } }, products: { type: 'array', items: registrationSchema },
    createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' },
  },
  required: ['userId', 'status', 'active'],
};
const vehicleSchema: JsonSchema = {
  type: 'object',
  properties: {
    vehicleId: { type: 'string' }, vin: { type: ['string', 'null'], pattern: VIN_PATTERN.source }, make: nullableString, model: nullableString, year: { type: ['integer', 'null'] },
    userId: nullableString,
    devices: { type: 'array', items: { type: 'object', properties: { deviceId: { type: 'string' }, type: { type: 'string', enum: ['mobile', 'obd'] }, status: { type: 'string', enum: ['Active', 'Inactive'] } }, required: ['deviceId', 'type', 'status'] } },
    products: { type: 'array', items: registrationSchema },
    createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' },
  },
  required: ['vehicleId', 'vin', 'make', 'model', 'year', 'userId', 'devices', 'products', 'createdAt', 'updatedAt'],
};
const vehicleInputSchema: JsonSchema = closedBody({
  type: 'object',
  properties: {
    vehicleId: { type: ['string', 'null'], description: 'Optional on creation; generated when absent' },
    vin: { type: ['string', 'null'], pattern: '^[A-Za-z0-9]{17}$' }, make: nullableString, model: nullableString,
    year: { type: ['integer', 'null'] }, userId: { type: ['string', 'null'], description: 'The vehicle\'s user; must exist' },
  },
}, { VIN: 'vin' });
const consentSchema: JsonSchema = {
  type: 'object',
  properties: {
    consentId: { type: 'string' }, userId: { type: 'string' }, type: { type: 'string' }, version: { type: 'string' },
    action: { type: 'string', enum: ['granted', 'withdrawn'] }, granted: { type: 'boolean' }, timestamp: { type: 'string', format: 'date-time' },
    source: { type: 'string' }, recordedAt: { type: 'string', format: 'date-time' },
  },
};
const replaceBody: JsonSchema = closedBody({
  type: 'object',
  properties: { newDeviceId: { type: 'string' }, effectiveDate: date, type: { type: 'string', enum: ['mobile', 'obd'] } },
  required: ['newDeviceId', 'effectiveDate'],
});
const replaceResponse: JsonSchema = {
  type: 'object',
  properties: { deviceId: { type: 'string' }, type: { type: 'string', enum: ['mobile', 'obd'] }, replacesDeviceId: { type: 'string' }, effectiveDate: date },
  required: ['deviceId', 'type'],
};
const associationBody: JsonSchema = closedBody({
  type: 'object',
  properties: { effectiveDate: { ...date, description: 'First day of the association; today when absent' }, type: { type: 'string', enum: ['mobile', 'obd'], description: 'For a new device; mobile by default' } },
});
const activationBody: JsonSchema = closedBody({
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['Active', 'Inactive'], description: 'Any case; or use `active`' }, active: { type: 'boolean' },
    reason: { type: ['string', 'null'] }, effectiveDate: { ...date, description: 'Today when absent' },
  },
});
const deviceDocs = { response: deviceSchema };

// ---- GraphQL documents ----

const Q = {
  device: `query RegisteredDevice($deviceId: ID!) { registeredDevice(deviceId: $deviceId) { ${DEVICE} } }`,
  devicesByUser: `query RegisteredDevicesByUser($userId: ID!, $includeEnded: Boolean) { registeredDevicesByUser(userId: $userId, includeEnded: $includeEnded) { ${DEVICE} } }`,
  assign: `mutation AssignRegisteredDevice($deviceId: ID!, $userId: ID!, $input: RegisteredDeviceAssociationInput) { assignRegisteredDevice(deviceId: $deviceId, userId: $userId, input: $input) { ${DEVICE} } }`,
  toVehicle: `mutation AssociateRegisteredDeviceWithVehicle($deviceId: ID!, $vehicleId: ID!, $input: RegisteredDeviceAssociationInput) { associateRegisteredDeviceWithVehicle(deviceId: $deviceId, vehicleId: $vehicleId, input: $input) { ${DEVICE} } }`,
  replace: `mutation ReplaceRegisteredDevice($deviceId: ID!, $input: ReplaceRegisteredDeviceInput!) { replaceRegisteredDevice(deviceId: $deviceId, input: $input) { deviceId type replacesDeviceId currentAssociation { effectiveFrom } } }`,
  replaceOnly: `mutation ReplaceRegisteredUserDevice($userId: ID!, $input: ReplaceRegisteredDeviceInput!) { replaceRegisteredUserDevice(userId: $userId, input: $input) { deviceId type replacesDeviceId currentAssociation { effectiveFrom } } }`,
  end: `mutation EndRegisteredDeviceAssociation($userId: ID!, $deviceId: ID!, $effectiveEndDate: Date!) { endRegisteredDeviceAssociation(userId: $userId, deviceId: $deviceId, effectiveEndDate: $effectiveEndDate) { ${ASSOCIATION} } }`,
  status: `mutation SetRegisteredDeviceStatus($deviceId: ID!, $status: RegisteredDeviceStatus!) { setRegisteredDeviceStatus(deviceId: $deviceId, status: $status) { ${DEVICE} } }`,
  vehicle: `query RegisteredVehicle($vehicleId: ID!) { registeredVehicle(vehicleId: $vehicleId) { ${VEHICLE} } }`,
  createVehicle: `mutation CreateRegisteredVehicle($input: RegisteredVehicleInput) { createRegisteredVehicle(input: $input) { ${VEHICLE} } }`,
  createVehicleDevices: `mutation CreateRegisteredVehicleWithDevices($input: RegisteredVehicleInput, $devices: [RegisteredVehicleDeviceInput!]!, $effectiveDate: Date) { createRegisteredVehicleWithDevices(input: $input, devices: $devices, effectiveDate: $effectiveDate) { ${VEHICLE} } }`,
  updateVehicle: `mutation UpdateRegisteredVehicle($vehicleId: ID!, $input: RegisteredVehicleInput!) { updateRegisteredVehicle(vehicleId: $vehicleId, input: $input) { ${VEHICLE} } }`,
  vehicleProduct: `mutation RegisterVehicleProduct($vehicleId: ID!, $productName: String!, $additionalParameters: JSON) { registerVehicleProduct(vehicleId: $vehicleId, productName: $productName, additionalParameters: $additionalParameters) { ${REGISTRATION} } }`,
  user: `query RegisteredUser($userId: ID!) { registeredUser(userId: $userId) { ${USER} } }`,
  userByDevice: `query RegisteredUserByDevice($deviceId: ID!) { registeredUserByDevice(deviceId: $deviceId) { ${USER} } }`,
  createUser: `mutation RegisterUser($input: RegisterUserInput) { registerUser(input: $input) { userId } }`,
  activation: `mutation SetRegisteredUserActivation($userId: ID!, $input: RegistrationActivationInput!, $mode: RegistrationUpdateMode) { setRegisteredUserActivation(userId: $userId, input: $input, mode: $mode) { ${USER} } }`,
  userProducts: `mutation RegisterUserProducts($userId: ID!, $products: [String!]!, $additionalParameters: JSON) { registerUserProducts(userId: $userId, products: $products, additionalParameters: $additionalParameters) { ${REGISTRATION} } }`,
  userProduct: `mutation RegisterUserProduct($userId: ID!, $productName: String!, $additionalParameters: JSON) { registerUserProduct(userId: $userId, productName: $productName, additionalParameters: $additionalParameters) { registrationId } }`,
  unenroll: `mutation UnenrollUserProduct($userId: ID!, $productName: String!) { unenrollUserProduct(userId: $userId, productName: $productName) { registrationId } }`,
  consent: `mutation RecordConsent($input: RecordConsentInput!) { recordConsent(input: $input) { ${CONSENT} } }`,
  consents: `query RegistrationConsents($userId: ID!) { registrationConsents(userId: $userId) { userId current { ${CONSENT} } history { ${CONSENT} } } }`,
};

const replaced = (r: unknown) => {
  const d = r as Row;
  return { deviceId: d.deviceId, type: lower(d.type), replacesDeviceId: d.replacesDeviceId, effectiveDate: (d.currentAssociation as Row | null)?.effectiveFrom ?? null };
};

const b2b = { scope: 'b2b' as const };

export const registrationRoutes: RestRoute[] = [
  // Devices
  {
    ...b2b, method: 'PUT', path: `${P}/users/:userId/devices/:deviceId`, operationId: 'endUserDeviceAssociation', tag: TAG_DEVICES,
    summary: 'Set the effective end date of a device\'s association with the user', operation: Q.end,
    variables: (req) => {
      const body = objectBody(req);
      return { userId: req.params.userId, deviceId: req.params.deviceId, effectiveEndDate: required(body, 'effectiveEndDate', 'effectiveDate', 'endDate') };
    },
    result: (d) => restAssociation(d.endRegisteredDeviceAssociation as Row),
    docs: {
      description: 'The association ends on that day (exclusive); it may lie in the future. Its row is kept in the device history.',
      requestBody: closedBody({ type: 'object', properties: { effectiveEndDate: date }, required: ['effectiveEndDate'] }, { effectiveDate: 'effectiveEndDate', endDate: 'effectiveEndDate' }),
      requestExample: { effectiveEndDate: '2026-12-31' }, response: associationSchema,
    },
  },
  {
    ...b2b, method: 'PUT', path: `${P}/devices/:deviceId/vehicle/:vehicleId`, operationId: 'associateDeviceWithVehicle', tag: TAG_DEVICES,
    summary: 'Associate a device with a vehicle (the user, if any, stays); creates an unknown device', operation: Q.toVehicle,
    variables: (req) => ({ deviceId: req.params.deviceId, vehicleId: req.params.vehicleId, input: associationInput(req) }),
    result: (d) => restDevice(d.associateRegisteredDeviceWithVehicle), docs: { ...deviceDocs, requestBody: associationBody, requestExample: { effectiveDate: '2026-11-01' } },
  },
  {
    ...b2b, method: 'PUT', path: `${P}/users/:userId/devices`, operationId: 'replaceUserDevice', tag: TAG_DEVICES,
    summary: 'Replace the user\'s only active device (400 when the user has several)', operation: Q.replaceOnly,
    variables: (req) => ({ userId: req.params.userId, input: replaceInput(req) }), result: (d) => replaced(d.replaceRegisteredUserDevice),
    docs: { requestBody: replaceBody, requestExample: { effectiveDate: '2026-11-20', newDeviceId: '356938035643810' }, response: replaceResponse },
  },
  {
    ...b2b, method: 'PUT', path: `${P}/devices/:deviceId/users/:userId`, operationId: 'assignDeviceToUser', tag: TAG_DEVICES,
    summary: 'Assign a device to a user, or move it from another user (the vehicle stays); creates an unknown device', operation: Q.assign,
    variables: (req) => ({ deviceId: req.params.deviceId, userId: req.params.userId, input: associationInput(req) }),
    result: (d) => restDevice(d.assignRegisteredDevice), docs: { ...deviceDocs, requestBody: associationBody, requestExample: { effectiveDate: '2026-11-01', type: 'mobile' } },
  },
  {
    ...b2b, method: 'PUT', path: `${P}/devices/:deviceId/status`, operationId: 'setDeviceStatus', tag: TAG_DEVICES,
    summary: 'Set a device\'s status: Active or Inactive', operation: Q.status,
    variables: (req) => ({ deviceId: req.params.deviceId, status: deviceStatus(objectBody(req).status) }),
    result: (d) => restDevice(d.setRegisteredDeviceStatus),
    docs: { ...deviceDocs, requestBody: closedBody({ type: 'object', properties: { status: { type: 'string', enum: ['Active', 'Inactive'], description: 'Any case' } }, required: ['status'] }), requestExample: { status: 'Inactive' } },
  },
  {
    ...b2b, method: 'GET', path: `${P}/devices/users/:userId`, operationId: 'getUserDevices', tag: TAG_DEVICES,
    summary: 'The devices currently associated with a user (with includeHistory=true, every device ever)', operation: Q.devicesByUser,
    variables: (req) => ({ userId: req.params.userId, includeEnded: includeHistory(req) }),
    result: (d, req) => ({ userId: req.params.userId, devices: (d.registeredDevicesByUser as Row[]).map((x) => restDevice(x)) }),
    docs: {
      query: { includeHistory: { type: 'boolean', description: 'Also list devices whose association has ended' } },
      response: { type: 'object', properties: { userId: { type: 'string' }, devices: { type: 'array', items: deviceSchema } } },
    },
  },
  {
    ...b2b, method: 'GET', path: `${P}/devices/:deviceId`, operationId: 'getDevice', tag: TAG_DEVICES,
    summary: 'A device with its current association and history', operation: Q.device,
    variables: (req) => ({ deviceId: req.params.deviceId }), result: (d, req) => restDevice(d.registeredDevice, req.params.deviceId), docs: deviceDocs,
  },
  {
    ...b2b, method: 'PUT', path: `${P}/devices/:deviceId`, operationId: 'replaceDevice', tag: TAG_DEVICES,
    summary: 'Replace a device: the new device takes over its user and vehicle from effectiveDate', operation: Q.replace,
    variables: (req) => ({ deviceId: req.params.deviceId, input: replaceInput(req) }), result: (d) => replaced(d.replaceRegisteredDevice),
    docs: {
      description: 'The old device\'s association ends on effectiveDate and it becomes Inactive; both rows stay in the history.',
      requestBody: replaceBody, requestExample: { effectiveDate: '2026-11-20', newDeviceId: '356938035643810' },
      response: replaceResponse,
    },
  },
  // Vehicles
  {
    ...b2b, method: 'POST', path: `${P}/vehicles/devices`, operationId: 'createRegisteredVehicleWithDevices', tag: TAG_VEHICLES, status: 201,
    summary: 'Create a vehicle and associate new or unassociated devices with it, all or nothing', operation: Q.createVehicleDevices,
    variables: (req) => {
      const body = objectBody(req);
      return { input: vehicleInput(body), devices: vehicleDevices(body), effectiveDate: str(body, 'effectiveDate') ?? null };
    },
    result: (d) => restVehicle(d.createRegisteredVehicleWithDevices),
    docs: {
      requestBody: closedBody({
        ...vehicleInputSchema,
        properties: {
          ...(vehicleInputSchema.properties as object),
          devices: { type: 'array', minItems: 1, description: 'Devices as { deviceId, type } or as ids', items: { oneOf: [{ type: 'object', properties: { deviceId: { type: 'string' }, type: { type: 'string', enum: ['mobile', 'obd'] } }, required: ['deviceId'] }, { type: 'string' }] } },
          effectiveDate: date,
        },
        required: ['devices'],
      }, { deviceIds: 'devices' }),
      requestExample: { vehicleId: 'veh-42', vin: '1HGCM82633A004352', userId: 'driver-001', devices: [{ deviceId: 'obd-7781', type: 'obd' }] },
      response: vehicleSchema,
    },
  },
  {
    ...b2b, method: 'GET', path: `${P}/vehicle/:vehicleId`, operationId: 'getRegisteredVehicle', tag: TAG_VEHICLES, summary: 'A vehicle with its devices and products',
    operation: Q.vehicle, variables: (req) => ({ vehicleId: req.params.vehicleId }), result: (d, req) => restVehicle(d.registeredVehicle, req.params.vehicleId),
    docs: { response: vehicleSchema },
  },
  {
    ...b2b, method: 'PUT', path: `${P}/vehicle/:vehicleId`, operationId: 'updateRegisteredVehicle', tag: TAG_VEHICLES, summary: 'Change the vehicle fields sent (null clears one)',
    operation: Q.updateVehicle, variables: (req) => ({ vehicleId: req.params.vehicleId, input: vehicleInput(objectBody(req)) }),
    result: (d) => restVehicle(d.updateRegisteredVehicle),
    docs: { requestBody: vehicleInputSchema, requestExample: { make: 'Honda', model: 'Civic' }, response: vehicleSchema },
  },
  {
    ...b2b, method: 'PUT', path: `${P}/product/:productName/vehicle/:vehicleId/register`, operationId: 'registerVehicleProduct', tag: TAG_VEHICLES,
    summary: 'Register a vehicle for a product (consents are those of the vehicle\'s user)', operation: Q.vehicleProduct,
    variables: (req) => ({ vehicleId: req.params.vehicleId, productName: req.params.productName, additionalParameters: additionalParameters(objectBody(req)) }),
    result: (d) => restRegistration(d.registerVehicleProduct as Row),
    docs: { params: { productName: productNameParam('vehicle') }, requestBody: closedBody({ type: 'object', properties: { additionalParameters: additionalParametersSchema } }), response: registrationSchema },
  },
  {
    ...b2b, method: 'POST', path: `${P}/vehicles`, operationId: 'createRegisteredVehicle', tag: TAG_VEHICLES, status: 201, summary: 'Create a vehicle (id generated when absent)',
    operation: Q.createVehicle, variables: (req) => ({ input: vehicleInput(objectBody(req)) }), result: (d) => restVehicle(d.createRegisteredVehicle),
    docs: { requestBody: vehicleInputSchema, requestExample: { vehicleId: 'veh-42', vin: '1HGCM82633A004352', make: 'Honda', model: 'Accord', year: 2021 }, response: vehicleSchema },
  },
  // Users
  {
    ...b2b, method: 'GET', path: `${P}/users/:userId`, operationId: 'getRegisteredUser', tag: TAG_USERS, summary: 'A user with activation, devices and products',
    operation: Q.user, variables: (req) => ({ userId: req.params.userId }), result: (d, req) => restUser(d.registeredUser, req.params.userId),
    docs: { response: userSchema },
  },
  {
    ...b2b, method: 'GET', path: `${P}/users/devices/:deviceId`, operationId: 'getUserByDevice', tag: TAG_USERS, summary: 'The user a device currently belongs to',
    operation: Q.userByDevice, variables: (req) => ({ deviceId: req.params.deviceId }),
    result: (d, req) => {
      if (!d.registeredUserByDevice) throw notFound('RegisteredUser for device', req.params.deviceId ?? '');
      return restUser(d.registeredUserByDevice);
    },
    docs: { response: userSchema },
  },
  {
    ...b2b, method: 'POST', path: `${P}/users`, operationId: 'createRegisteredUser', tag: TAG_USERS, status: 201, summary: 'Create a user (id generated when absent)',
    operation: Q.createUser,
    variables: (req) => {
      const body = objectBody(req);
      const userId = pick(body, 'userId', 'userID');
      if (userId != null && typeof userId !== 'string') throw badInput('userId must be a string', 'userId');
      return { input: defined({ userId: userId ?? undefined }) };
    },
    result: (d) => ({ userId: (d.registerUser as Row).userId }),
    docs: {
      requestBody: closedBody({ type: 'object', properties: { userId: { type: ['string', 'null'], description: 'Generated when absent or null' } } }, { userID: 'userId' }),
      requestExample: { userId: 'driver-001' }, response: { type: 'object', properties: { userId: { type: 'string' } }, required: ['userId'] },
    },
  },
  {
    ...b2b, method: 'PUT', path: `${P}/users/:userId/activation`, operationId: 'setUserActivation', tag: TAG_USERS,
    summary: 'Set the activation (status required; absent reason cleared, absent date today)', operation: Q.activation,
    variables: (req) => {
      const input = activationInput(req);
      if (!input.status) throw badInput('status (Active or Inactive) or active (true or false) is required', 'status');
      return { userId: req.params.userId, input, mode: 'REPLACE' };
    },
    result: (d) => restUser(d.setRegisteredUserActivation),
    docs: { description: 'A deactivated user cannot take new devices or products (409).', requestBody: activationBody, requestExample: { status: 'Inactive', reason: 'contract ended' }, response: userSchema },
  },
  {
    ...b2b, method: 'PATCH', path: `${P}/users/:userId/activation`, operationId: 'changeUserActivation', tag: TAG_USERS,
    summary: 'Change only the activation fields sent', operation: Q.activation,
    variables: (req) => ({ userId: req.params.userId, input: activationInput(req), mode: 'MERGE' }),
    result: (d) => restUser(d.setRegisteredUserActivation),
    docs: { requestBody: activationBody, requestExample: { active: true }, response: userSchema },
  },
  {
    ...b2b, method: 'POST', path: `${P}/users/products`, operationId: 'registerUserProducts', tag: TAG_PRODUCTS, status: 201,
    summary: 'Register a user for products, all or nothing (each product\'s consents must be granted)', operation: Q.userProducts,
    variables: (req) => {
      const body = objectBody(req);
      const products = body.products;
      if (!Array.isArray(products) || products.length === 0 || products.some((p) => typeof p !== 'string')) {
        throw badInput('products must be a non-empty list of product names', 'products');
      }
      return { userId: required(body, 'userId'), products, additionalParameters: additionalParameters(body) };
    },
    result: (d, req) => ({ userId: (objectBody(req) as Row).userId, products: (d.registerUserProducts as Row[]).map(restRegistration) }),
    docs: {
      description: 'Unknown product: 400. Missing consent: 409 naming it (missingConsents). Product un-enrolled before: 409.',
      requestBody: closedBody({ type: 'object', properties: { userId: { type: 'string' }, products: { type: 'array', minItems: 1, items: { type: 'string', pattern: productNameParam('user').pattern as string } }, additionalParameters: additionalParametersSchema }, required: ['userId', 'products'] }),
      requestExample: { userId: 'driver-001', products: ['Driving Behavior'], additionalParameters: { programCode: 'FLEET-7' } },
      response: { type: 'object', properties: { userId: { type: 'string' }, products: { type: 'array', items: registrationSchema } } },
    },
  },
  {
    ...b2b, method: 'DELETE', path: `${P}/users/:userId/products/:productName`, operationId: 'unenrollUserProduct', tag: TAG_PRODUCTS, status: 204,
    summary: 'Un-enrol a user from a product (final: the product cannot be registered again)', operation: Q.unenroll,
    variables: (req) => ({ userId: req.params.userId, productName: req.params.productName }), result: () => undefined,
    docs: { params: { productName: productNameParam('user') } },
  },
  {
    ...b2b, method: 'POST', path: `${P}/users/:userId/products/:productName`, operationId: 'registerUserProduct', tag: TAG_PRODUCTS, status: 204,
    summary: 'Register a user for a product; refused (409) after un-enrolment or without the consents it needs', operation: Q.userProduct,
    variables: (req) => ({ userId: req.params.userId, productName: req.params.productName, additionalParameters: additionalParameters(objectBody(req)) }),
    result: () => undefined,
    docs: { params: { productName: productNameParam('user') }, requestBody: closedBody({ type: 'object', properties: { additionalParameters: additionalParametersSchema } }) },
  },
  // Consents
  {
    ...b2b, method: 'POST', path: `${P}/consents`, operationId: 'recordConsent', tag: TAG_CONSENTS, status: 201,
    summary: 'Record a consent grant or withdrawal (append-only)', operation: Q.consent,
    variables: (req) => ({ input: consentInput(req) }), result: (d) => restConsent(d.recordConsent as Row),
    docs: {
      requestBody: closedBody({
        type: 'object',
        properties: {
          userId: { type: 'string' }, type: { type: 'string', enum: ['location-tracking', 'driving-data-sharing', 'vehicle-data-collection', 'marketing'] },
          version: { type: 'string' }, granted: { type: 'boolean', description: 'Or action: granted | withdrawn' }, action: { type: 'string', enum: ['granted', 'withdrawn'], description: 'Any case' },
          timestamp: { type: 'string', format: 'date-time', description: 'Now when absent; not in the future' }, source: { type: 'string' },
        },
        required: ['userId', 'type', 'version', 'source'],
        anyOf: [{ required: ['granted'] }, { required: ['action'] }, { required: ['status'] }],
      }, { consentType: 'type', status: 'action' }),
      requestExample: { userId: 'driver-001', type: 'location-tracking', version: '2.1', granted: true, timestamp: '2026-11-01T09:01:00Z', source: 'mobile-app' },
      response: consentSchema,
    },
  },
  {
    ...b2b, method: 'GET', path: `${P}/consents/:userId`, operationId: 'getConsents', tag: TAG_CONSENTS, summary: 'A user\'s current consent per type and the full history',
    operation: Q.consents, variables: (req) => ({ userId: req.params.userId }),
    result: (d) => {
      const state = d.registrationConsents as Row;
      return { userId: state.userId, consents: (state.current as Row[]).map(restConsent), history: (state.history as Row[]).map(restConsent) };
    },
    docs: {
      response: { type: 'object', properties: { userId: { type: 'string' }, consents: { type: 'array', items: consentSchema }, history: { type: 'array', items: consentSchema } } },
    },
  },
];
