import { badInput } from '../platform/errors.ts';
import { DEVICE_ID_MAX } from './rules.ts';
import { VIN_PATTERN } from '../platform/scalars.ts';
import { closedBody, defined, objectBody, pick, queryString } from '../platform/rest/body.ts';
import { found, typedRoute } from '../platform/rest/operation.ts';
import type { JsonSchema, RestRequest, RestRoute } from '../platform/rest/types.ts';
import { restBooking, restVehicle } from './representation.ts';
import { CreateVehicle, EndBooking, GetBooking, GetVehicle, ListBookings, PairDevice, StartBooking } from './rest.generated.ts';

/** Base path of the booking and pre-qualification areas. */
export const BOOKING_PREFIX = '/shared-mobility-insights/v2';

// ---- request mapping ---------------------------------------------------------------------------

/** A body or path VIN (the VIN scalar validates it and upper-cases it). */
function vinOf(value: unknown, field: string): unknown {
  if (value === undefined || value === null || value === '') throw badInput('VIN is required: 17 letters or digits', field);
  return value;
}

/** Epoch seconds as documented (an integer); a string of digits is accepted too. Other values go to the scalar, which refuses them. */
function epoch(value: unknown): unknown {
  return typeof value === 'string' && /^\d{1,15}$/.test(value.trim()) ? Number(value.trim()) : value;
}

/** An optional string id: absent stays absent, null stays null (both mean "generate"), numbers become strings. */
function optionalId(value: unknown): unknown {
  return typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
}

/** The body's VIN (`VIN` or `vin`) and the path's; a body VIN that contradicts the path is a 400. */
function vehicleVariables(req: RestRequest) {
  const body = objectBody(req);
  const bodyVin = pick(body, 'VIN', 'vin');
  const pathVin = req.params.vin;
  if (pathVin !== undefined && bodyVin != null && String(bodyVin).toUpperCase() !== pathVin.toUpperCase()) {
    throw badInput('The VIN in the body differs from the one in the path', 'VIN');
  }
  return defined({ vin: vinOf(pathVin ?? bodyVin, 'VIN'), deviceId: optionalId(pick(body, 'deviceID', 'deviceId', 'imei')) ?? undefined });
}

function startVariables(req: RestRequest) {
  const body = objectBody(req);
  const start = pick(body, 'startTimestamp');
  if (start === undefined || start === null) throw badInput('startTimestamp is required (epoch seconds)', 'startTimestamp');
  return {
    input: defined({
      bookingId: optionalId(pick(body, 'bookingID', 'bookingId')),
      vin: vinOf(pick(body, 'VIN', 'vin'), 'VIN'),
      userId: optionalId(pick(body, 'userID', 'userId')),
      deviceId: optionalId(pick(body, 'deviceID', 'deviceId')),
      startTimestamp: epoch(start),
      estimatedEndTimestamp: epoch(pick(body, 'estimatedEndTimestamp')),
    }),
  };
}

function endVariables(req: RestRequest) {
  const body = objectBody(req);
  const bodyId = pick(body, 'bookingID', 'bookingId');
  if (bodyId != null && String(bodyId) !== req.params.bookingId) {
    throw badInput('The bookingID in the body differs from the id the booking was started with (the path)', 'bookingID');
  }
  const end = pick(body, 'actualEndTimestamp');
  if (end === undefined || end === null) throw badInput('actualEndTimestamp is required (epoch seconds)', 'actualEndTimestamp');
  return { bookingId: req.params.bookingId, actualEndTimestamp: epoch(end) };
}

function listVariables(req: RestRequest) {
  const number = (name: string) => {
    const raw = queryString(req, name);
    if (raw === undefined) return undefined;
    if (!/^\d{1,15}$/.test(raw)) throw badInput(`${name} must be a whole number`, name);
    return Number(raw);
  };
  const status = queryString(req, 'status');
  return defined({
    filter: defined({
      vin: queryString(req, 'vin') ?? queryString(req, 'VIN'),
      userId: queryString(req, 'userId') ?? queryString(req, 'userID'),
      status: status?.toUpperCase(),
      startFrom: number('startFrom'),
      startTo: number('startTo'),
    }),
    first: number('first'),
    after: queryString(req, 'after'),
  });
}

// ---- result mapping ----------------------------------------------------------------------------


// ---- OpenAPI -----------------------------------------------------------------------------------

const epochSchema = { type: 'integer', minimum: 0, description: 'Epoch seconds (UTC)' };
const vinSchema = { type: 'string', pattern: VIN_PATTERN.source, description: 'Exactly 17 letters or digits; stored and returned upper-case' };
const vinParam = { params: { vin: { ...vinSchema, example: '1HGCM82633A004352', description: 'The VIN: exactly 17 letters or digits, any case (400 otherwise)' } } };

const vehicleSchema: JsonSchema = {
  type: 'object',
  properties: {
    VIN: vinSchema, vin: { ...vinSchema, description: 'Same as VIN' },
    deviceID: { type: ['string', 'null'], description: 'The paired device (IMEI), or null' }, deviceId: { type: ['string', 'null'], description: 'Same as deviceID' },
    createdAt: { type: 'string', format: 'date-time' },
  },
  required: ['VIN', 'vin', 'deviceID', 'deviceId', 'createdAt'],
};

const vehicleInputSchema: JsonSchema = closedBody({
  type: 'object',
  properties: {
    VIN: vinSchema,
    deviceID: { type: 'string', description: 'Optional: pairs this device (IMEI) with the vehicle (and unpairs it from any other vehicle)' },
  },
}, { vin: 'VIN', deviceId: 'deviceID', imei: 'deviceID' });

const bookingSchema: JsonSchema = {
  type: 'object',
  properties: {
    bookingID: { type: 'string' }, bookingId: { type: 'string', description: 'Same as bookingID' },
    VIN: vinSchema, vin: { ...vinSchema, description: 'Same as VIN' },
    userID: { type: 'string' }, userId: { type: 'string', description: 'Same as userID' },
    deviceID: { type: 'string' }, deviceId: { type: 'string', description: 'Same as deviceID' },
    startTimestamp: epochSchema,
    estimatedEndTimestamp: { ...epochSchema, type: ['integer', 'null'] },
    actualEndTimestamp: { ...epochSchema, type: ['integer', 'null'] },
    status: { type: 'string', enum: ['active', 'ended'] },
    createdAt: { type: 'string', format: 'date-time' }, updatedAt: { type: 'string', format: 'date-time' },
  },
  required: ['bookingID', 'bookingId', 'VIN', 'vin', 'userID', 'userId', 'deviceID', 'deviceId', 'startTimestamp', 'status'],
};

const startInputSchema: JsonSchema = closedBody({
  type: 'object',
  properties: {
    bookingID: { type: ['string', 'null'], description: 'Optional; generated when omitted or null. An id already used is a 409' },
    bookingId: { type: ['string', 'null'], description: 'Alias of bookingID' },
    VIN: { ...vinSchema, description: 'Required. The vehicle must have been created first (404 otherwise)' },
    vin: { ...vinSchema, description: 'Alias of VIN' },
    userID: { type: ['string', 'null'], description: 'Optional; generated when omitted or null (a generated id creates no user). Not validated' },
    userId: { type: ['string', 'null'], description: 'Alias of userID' },
    deviceID: { type: ['string', 'null'], description: 'Required when the VIN has no paired device; a different device re-pairs the VIN' },
    deviceId: { type: ['string', 'null'], description: 'Alias of deviceID' },
    startTimestamp: { ...epochSchema, description: 'Required. Actual start, epoch seconds' },
    estimatedEndTimestamp: { ...epochSchema, type: ['integer', 'null'], description: 'Optional; later than startTimestamp' },
  },
  required: ['VIN', 'startTimestamp'],
});

const endInputSchema: JsonSchema = closedBody({
  type: 'object',
  properties: {
    actualEndTimestamp: { ...epochSchema, description: 'Required; later than the booking\'s startTimestamp' },
    bookingID: { type: 'string', description: 'Optional; when sent it must equal the path\'s bookingId (400 otherwise)' },
    bookingId: { type: 'string', description: 'Alias of bookingID' },
  },
  required: ['actualEndTimestamp'],
});


const listSchema: JsonSchema = {
  type: 'object',
  properties: {
    bookings: { type: 'array', items: bookingSchema },
    hasNextPage: { type: 'boolean' },
    nextCursor: { type: ['string', 'null'], description: 'Pass as `after` for the next page' },
  },
  required: ['bookings', 'hasNextPage', 'nextCursor'],
};

// ---- the table ---------------------------------------------------------------------------------

const vehicleDocs = { requestBody: vehicleInputSchema, requestExample: { VIN: '1HGCM82633A004352', deviceID: '356938035643809' }, response: vehicleSchema };

export const bookingRoutes: readonly RestRoute[] = [
  typedRoute(CreateVehicle, {
    method: 'POST', path: `${BOOKING_PREFIX}/vehicles`, operationId: 'createVehicle', summary: 'Create a vehicle (VIN in the body); 409 when the VIN exists',
    tag: 'Vehicles', scope: 'b2b', status: 201,
    variables: vehicleVariables, result: (d) => restVehicle(d.createVehicle), docs: vehicleDocs,
  }),
  typedRoute(CreateVehicle, {
    method: 'POST', path: `${BOOKING_PREFIX}/vehicles/:vin`, operationId: 'createVehicleWithVin', summary: 'Create a vehicle with the VIN in the path',
    tag: 'Vehicles', scope: 'b2b', status: 201,
    variables: vehicleVariables, result: (d) => restVehicle(d.createVehicle),
    docs: { ...vehicleDocs, ...vinParam, requestExample: { deviceID: '356938035643809' }, description: 'The body is optional; a VIN in it must equal the path\'s.' },
  }),
  typedRoute(GetVehicle, {
    method: 'GET', path: `${BOOKING_PREFIX}/vehicles/:vin`, operationId: 'getVehicle', summary: 'Retrieve a vehicle and its paired device',
    tag: 'Vehicles', scope: 'b2b',
    variables: (req) => ({ vin: req.params.vin }),
    result: (d, req) => restVehicle(found(d.vehicle, 'Vehicle', req.params.vin.toUpperCase())),
    docs: { ...vinParam, response: vehicleSchema },
  }),
  typedRoute(PairDevice, {
    method: 'POST', path: `${BOOKING_PREFIX}/vehicles/:vin/devices/:imei`, operationId: 'pairDevice',
    summary: 'Pair a device (IMEI) with a vehicle (older form); the device is unpaired from any other vehicle',
    tag: 'Vehicles', scope: 'b2b',
    variables: (req) => ({ vin: req.params.vin, deviceId: req.params.imei }), result: (d) => restVehicle(d.pairDevice),
    docs: {
      response: vehicleSchema, description: 'No body. 404 when the vehicle was never created.',
      params: { ...vinParam.params, imei: { description: `The device id. Usually an IMEI (15 digits), but, as for deviceID in the bodies, any identifier of 1 to ${DEVICE_ID_MAX} characters is accepted (the interface spec types deviceID as a string); a longer one is 400.`, minLength: 1, maxLength: DEVICE_ID_MAX, example: '356938035643809' } },
    },
  }),
  typedRoute(StartBooking, {
    method: 'POST', path: `${BOOKING_PREFIX}/bookings`, operationId: 'startBooking', summary: 'Start a booking',
    tag: 'Bookings', scope: 'b2b', status: 201,
    variables: startVariables, result: (d) => restBooking(d.startBooking),
    docs: {
      description: 'The vehicle must exist (404). 400: bad VIN, missing startTimestamp, estimatedEndTimestamp not later than startTimestamp, '
        + 'no deviceID while the VIN has no paired device. 409: bookingID already used, or the period overlaps another booking of the vehicle '
        + '(a booking occupies [start, actualEnd ?? estimatedEnd ?? open)).',
      requestBody: startInputSchema,
      requestExample: { VIN: '1HGCM82633A004352', userID: 'driver-001', deviceID: '356938035643809', startTimestamp: 1795000000, estimatedEndTimestamp: 1795086400 },
      response: bookingSchema,
    },
  }),
  typedRoute(EndBooking, {
    method: 'PUT', path: `${BOOKING_PREFIX}/bookings/:bookingId`, operationId: 'endBooking', summary: 'End a booking',
    tag: 'Bookings', scope: 'b2b',
    variables: endVariables, result: (d) => restBooking(d.endBooking),
    docs: {
      description: '404 for an unknown booking, 409 when it has already ended (or the new end overlaps a later booking), '
        + '400 when actualEndTimestamp is missing or not later than startTimestamp, or the body\'s bookingID differs from the path.',
      requestBody: endInputSchema, requestExample: { actualEndTimestamp: 1795080000 },
      response: bookingSchema,
    },
  }),
  typedRoute(GetBooking, {
    method: 'GET', path: `${BOOKING_PREFIX}/bookings/:bookingId`, operationId: 'getBooking', summary: 'Retrieve a booking',
    tag: 'Bookings', scope: 'b2b',
    variables: (req) => ({ bookingId: req.params.bookingId }),
    result: (d, req) => restBooking(found(d.booking, 'Booking', req.params.bookingId)),
    docs: { response: bookingSchema },
  }),
  typedRoute(ListBookings, {
    method: 'GET', path: `${BOOKING_PREFIX}/bookings`, operationId: 'listBookings', summary: 'List bookings, most recent start first, with cursor paging',
    tag: 'Bookings', scope: 'b2b',
    variables: listVariables,
    result: ({ bookings: { nodes, pageInfo } }) => ({
      bookings: nodes.map(restBooking), hasNextPage: pageInfo.hasNextPage, nextCursor: pageInfo.hasNextPage ? pageInfo.endCursor : null,
    }),
    docs: {
      query: {
        vin: { ...vinSchema, description: 'Only this vehicle\'s bookings (17 letters or digits, any case; alias VIN)' },
        userId: { type: 'string', description: 'Only this user id\'s bookings (userID accepted too)' },
        status: { type: 'string', enum: ['active', 'ended'], description: 'Any case' },
        startFrom: { type: 'integer', minimum: 0, description: 'Bookings starting at or after (epoch seconds)' },
        startTo: { type: 'integer', minimum: 0, description: 'Bookings starting before (epoch seconds)' },
        first: { type: 'integer', minimum: 1, maximum: 100, description: 'Page size (default 20, at most 100)' },
        after: { type: 'string', description: 'nextCursor of the previous page' },
      },
      response: listSchema,
    },
  }),
];
