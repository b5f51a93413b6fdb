import { badInput } from '../platform/errors.ts';
import { ALLOWED_CONTENT_TYPES, BATTERY_SERVICES, FUEL_TYPES, KEYS_LOCATIONS, MAX_FILE_BYTES } from './rules.ts';
import {
  availabilityAnswer, cost, customerInput, etaAnswer, feedbackAnswer, file, fileTypeSchema, locationInput,
  providersAnswer, provisioning, provisioningInput, provisioningUpdate, REST_SERVICES, REST_STATUSES, serviceRequest,
  towLocationsAnswer, vehicleInput,
} from './rest-schemas.ts';
import { answer, nullable } from '../platform/rest/components.ts';
import { closedBody, defined, objectBody, pick, queryString } from '../platform/rest/body.ts';
import { found, typedRoute } from '../platform/rest/operation.ts';
import type { JsonSchema, RestRequest, RestRoute } from '../platform/rest/types.ts';
import { restRescue, restStatus } from './representation.ts';
import {
  CancelRescue, DispatchRescue, ProviderFile, ProviderFiles, ProvisionRescueMember, QuoteRescue, Rescue,
  RescueAvailability, RescueBenefits, RescueEta, RescueProviders, RescueProvisioning, StartRescueSession,
  SubmitRescueFeedback, TowLocations, UpdateRescueProvisioning, UpdateRescueStatus, UploadProviderFile, VehicleMakes,
  VehicleModels, type ProviderFileQuery,
} from './rest.generated.ts';

/** Base path of the roadside rescue area. */
export const ROADSIDE_PREFIX = '/services/roadside/v1';
const TAG = 'Roadside rescue';

// ---- request mapping ---------------------------------------------------------------------------

type Obj = Record<string, unknown>;

/**
 * A number sent as text (query strings, forms) becomes a number; anything else goes to GraphQL, which
 * refuses what is not one.
 */
function num(value: unknown): unknown {
  return typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
}

/** Empty form fields count as absent. */
const blank = (value: unknown) => (value === '' ? undefined : value);

/** Y/N, true/false (any case) or a boolean; other values go to GraphQL, which refuses them. */
function bool(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  if (['y', 'yes', 'true', '1'].includes(v)) return true;
  if (['n', 'no', 'false', '0'].includes(v)) return false;
  return value;
}

/** A documented enum spelling (any case, `-` or space for `_`) as the GraphQL enum value. */
function enumValue(value: unknown): unknown {
  return typeof value === 'string' ? value.trim().toUpperCase().replaceAll(/[\s-]+/g, '_') : value;
}

function object(value: unknown, field: string): Obj | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw badInput(`${field} must be an object`, field);
  return value as Obj;
}

function location(value: unknown, field: string): Obj | undefined {
  const loc = object(value, field);
  if (!loc) return undefined;
  return defined({
    latitude: num(pick(loc, 'latitude', 'lat')), longitude: num(pick(loc, 'longitude', 'lon', 'lng')),
    address1: pick(loc, 'address1', 'address', 'street'), city: loc.city, state: loc.state,
    zip: pick(loc, 'zip', 'zipCode', 'postalCode'), landmark: loc.landmark,
  });
}

/** The disablement location: `disablementLocation` (or `disablement`, `location`) or top-level latitude/longitude. */
function disablementOf(body: Obj): Obj | undefined {
  const nested = pick(body, 'disablementLocation', 'disablement', 'location');
  if (nested !== undefined) return location(nested, 'disablementLocation');
  if (body.latitude === undefined && body.longitude === undefined) return undefined;
  return location({ latitude: body.latitude, longitude: body.longitude }, 'disablementLocation');
}

const destinationOf = (body: Obj) =>
  location(pick(body, 'destination', 'destinationLocation', 'towDestination'), 'destination');

function vehicleOf(body: Obj): Obj | undefined {
  const v = object(body.vehicle, 'vehicle');
  return v && defined({
    make: v.make, model: v.model, year: num(v.year), color: pick(v, 'color', 'colour'), vin: pick(v, 'vin', 'VIN'),
  });
}

function customerOf(body: Obj): Obj | undefined {
  const c = object(pick(body, 'customer', 'consumer'), 'customer');
  return c && defined({ firstName: c.firstName, lastName: c.lastName, phone: pick(c, 'phone', 'phoneNumber') });
}

const requestIdOf = (body: Obj) => pick(body, 'requestId', 'reqId');

function dispatchInput(req: RestRequest): Obj {
  const body = objectBody(req);
  return defined({
    sessionId: body.sessionId, disablementLocation: disablementOf(body), destination: destinationOf(body),
    towLocationId: body.towLocationId, vehicle: vehicleOf(body), customer: customerOf(body),
    spareAvailable: bool(body.spareAvailable), fuelType: enumValue(body.fuelType),
    keysLocation: enumValue(body.keysLocation), batteryService: enumValue(body.batteryService), comments: body.comments,
  });
}

const PROVISIONING_TEXT = [
  'productType', 'firstName', 'lastName', 'address1', 'address2', 'city', 'state', 'zip', 'emailAddress', 'phone',
  'companyName', 'make', 'model', 'vin', 'effectiveEndDate', 'serviceWeight',
];

/** Form-post fields as GraphQL input: empty fields are absent, numbers and Y/N flags are converted. */
function provisioningFields(body: Obj): Obj {
  const out: Obj = {};
  for (const name of PROVISIONING_TEXT) out[name] = blank(body[name]);
  out.year = num(blank(body.year));
  out.milesPerTow = num(blank(body.milesPerTow));
  out.numberOfEvents = num(blank(body.numberOfEvents));
  out.partnerPay = bool(blank(body.partnerPay));
  return defined(out);
}

const provisioningKey = (req: RestRequest) => ({
  partnerCode: req.params.partnerCd, memberId: req.params.memberId, assetIntegrationId: req.params.assetIntegrationId,
});

function keyValues(value: unknown, field: string): unknown {
  if (value === undefined || value === null) return value;
  if (!Array.isArray(value)) throw badInput(`${field} must be a list of {key, value}`, field);
  return value.map((pair, i) => {
    const p = object(pair, `${field}[${i}]`) ?? {};
    const { key, value: v } = p;
    return { key, value: typeof v === 'number' || typeof v === 'boolean' ? String(v) : v };
  });
}

/**
 * The upload body: JSON with base64 `content`, or multipart with a file part (fields override the
 * part's name and type).
 */
function uploadInput(req: RestRequest): Obj {
  const body = objectBody(req);
  const part = Object.values(body).find((v): v is { filename: string; mimetype: string; base64: string } =>
    typeof v === 'object' && v !== null && 'base64' in v && typeof v.base64 === 'string');
  return defined({
    reqId: blank(requestIdOf(body)), memberId: blank(body.memberId), fileType: blank(body.fileType),
    fileName: blank(body.fileName) ?? part?.filename, contentType: blank(body.contentType) ?? part?.mimetype,
    contentBase64: part ? part.base64 : pick(body, 'content', 'contentBase64', 'data'),
  });
}

function sessionQuery(req: RestRequest): Obj {
  return defined({ sessionId: queryString(req, 'sessionId') });
}

// ---- result mapping ----------------------------------------------------------------------------


/** The stored file GET /provider/fileservice/retrieve/{contentid} answers. */
const storedFile = (d: ProviderFileQuery, req: RestRequest) => found(d.providerFile, 'File', req.params.contentid);

// ---- documentation -----------------------------------------------------------------------------

/** Other spellings of the places the mapping reads (disablementOf, destinationOf). */
const DISABLEMENT_ALIASES = { disablement: 'disablementLocation', location: 'disablementLocation' };
const DESTINATION_ALIASES = { destinationLocation: 'destination', towDestination: 'destination' };
const latitude = { type: 'number', minimum: -90, maximum: 90 };
const longitude = { type: 'number', minimum: -180, maximum: 180 };
const topLevelPoint: Record<string, JsonSchema> = {
  latitude: { ...latitude, description: 'With longitude, instead of disablementLocation' },
  longitude: { ...longitude, description: 'With latitude, instead of disablementLocation' },
};
/** The provisioning key in a path, as the member service checks it (longer is 400). */
const provisioningKeyParams = {
  memberId: { minLength: 1, maxLength: 128 }, assetIntegrationId: { minLength: 1, maxLength: 128 },
  partnerCd: { minLength: 1, maxLength: 64, description: 'The partner code' },
};
const sessionQueryDoc = {
  sessionId: { type: 'string', description: 'The session of the rescue (optional; must match when sent)' },
};
const exampleLocation = {
  latitude: 41.8781, longitude: -87.6298, address1: '233 S Wacker Dr', city: 'Chicago', state: 'IL', zip: '60606',
};

interface ServiceDoc { description: string; example: Obj; extra: Record<string, JsonSchema>; rule: JsonSchema }

/**
 * Each service's own fields and the rule on them, as the rescue service enforces it (required,
 * spareAvailable true, a tow's destination).
 */
const SERVICE_DOCS: Record<string, ServiceDoc> = {
  tire: {
    description: 'Tire change: `spareAvailable` is required and must be true (without a spare, book a tow).',
    example: { spareAvailable: true },
    extra: {
      spareAvailable: {
        type: ['boolean', 'string'], enum: [true, 'Y', 'true'],
        description: 'Must be true (Y or true, any case); false is 400',
      },
    },
    rule: { required: ['spareAvailable'] },
  },
  lockout: {
    description: 'Lockout: `keysLocation` is required: IN_VEHICLE, IN_TRUNK, LOST, BROKEN (any case).',
    example: { keysLocation: 'IN_VEHICLE' },
    extra: { keysLocation: { type: 'string', enum: KEYS_LOCATIONS, description: 'Any case; a dash or space for _' } },
    rule: { required: ['keysLocation'] },
  },
  gas: {
    description: 'Fuel delivery: `fuelType` is required: REGULAR, MIDGRADE, PREMIUM, DIESEL (any case).',
    example: { fuelType: 'REGULAR' },
    extra: { fuelType: { type: 'string', enum: FUEL_TYPES, description: 'Any case' } },
    rule: { required: ['fuelType'] },
  },
  tow: {
    description: 'Tow: `destination` (a location) or `towLocationId` (from /rescue/tow/locations) is required; '
      + 'at most 250 road miles (a longer tow is 400).',
    example: { towLocationId: 'TL-CHI-03' },
    extra: {
      destination: locationInput,
      towLocationId: {
        type: 'string', description: 'A tow-to location from /rescue/tow/locations, instead of destination',
      },
    },
    rule: { anyOf: [{ required: ['destination'] }, { required: ['towLocationId'] }] },
  },
  battery: {
    description: 'Battery: `batteryService` is required: JUMP or REPLACE (a replacement adds the battery price).',
    example: { batteryService: 'JUMP' },
    extra: { batteryService: { type: 'string', enum: BATTERY_SERVICES, description: 'Any case' } },
    rule: { required: ['batteryService'] },
  },
};

// ---- the table ---------------------------------------------------------------------------------

const minutesToArrive = nullable({ type: 'integer', description: 'Minutes until the provider arrives' });
const ok = { type: 'object', properties: { status: { type: 'string', const: 'OK' }, message: { type: 'string' } } };
const serviceNames = [...REST_SERVICES, 'changetire'].join('|');
const day = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}' };
const keyValue = {
  type: 'object', properties: { key: { type: 'string' }, value: { type: 'string' } }, required: ['key', 'value'],
};
const keyValueList = { type: 'array', items: keyValue };

/** One row per service (built from SERVICE_DOCS), all running DispatchRescue with the service as a variable. */
const dispatchRoutes = Object.entries(SERVICE_DOCS).map(([service, doc]) => typedRoute(DispatchRescue, {
  method: 'POST', path: `${ROADSIDE_PREFIX}/rescue/${service}`,
  operationId: `create${service[0].toUpperCase()}${service.slice(1)}Rescue`,
  summary: `Book a ${service} rescue and dispatch the nearest open provider`, tag: TAG, scope: 'roadside', status: 201,
  variables: (req) => ({ service: service.toUpperCase(), input: dispatchInput(req) }),
  result: ({ dispatchRescue: r }) => ({
    requestId: r.reqId, status: restStatus(r.status), eta: r.etaMinutes, serviceRequest: restRescue(r),
  }),
  docs: {
    description: `${doc.description} The session's member is covered while a claim is left (see /rescue/benefits); `
      + 'a pay-per-use session pays the whole cost. No open provider offering the service covering the spot is 409.',
    requestBody: closedBody({
      type: 'object', required: ['sessionId', 'disablementLocation'],
      properties: {
        sessionId: { type: 'string' },
        disablementLocation: {
          ...locationInput, description: 'Where the vehicle is (or latitude and longitude at the top level)',
        },
        ...topLevelPoint, vehicle: vehicleInput, customer: customerInput,
        comments: { type: 'string', maxLength: 1000, description: 'Free text for the provider' }, ...doc.extra,
      },
      ...doc.rule,
    }, { ...DISABLEMENT_ALIASES, consumer: 'customer', ...(service === 'tow' ? DESTINATION_ALIASES : {}) }),
    requestExample: {
      sessionId: '6f1c2d4e-0000-4000-8000-000000000001', disablementLocation: exampleLocation,
      vehicle: { make: 'Honda', model: 'Civic', year: 2021, color: 'Blue' }, ...doc.example,
    },
    response: answer({
      requestId: { type: 'string', format: 'uuid' }, status: { type: 'string', enum: REST_STATUSES },
      eta: minutesToArrive, serviceRequest,
    }),
  },
}));

const routes: RestRoute[] = [
  typedRoute(StartRescueSession, {
    method: 'POST', path: `${ROADSIDE_PREFIX}/rescue/session`, operationId: 'createSession',
    summary: 'Start a rescue session', tag: TAG, scope: 'roadside', status: 201,
    variables: (req) => {
      const body = objectBody(req);
      return {
        input: defined({
          appId: body.appId, benefits: keyValues(body.benefits, 'benefits'),
          otherInfo: keyValues(body.otherInfo, 'otherInfo'),
        }),
      };
    },
    result: (d) => d.startRescueSession,
    docs: {
      description: 'Benefit keys name the member: `memberId` or `policy` (the member id), optionally `partnerCode`, '
        + 'or `vin` (a provisioned asset). `otherInfo` `ppuflag` = Y makes the session pay-per-use.',
      requestBody: closedBody({
        type: 'object', required: ['appId'],
        properties: { appId: { type: 'string' }, benefits: keyValueList, otherInfo: keyValueList },
      }),
      requestExample: {
        appId: 'fleet-app', benefits: [{ key: 'vin', value: '1HGCM82633A004352' }, { key: 'policy', value: 'M-1001' }],
        otherInfo: [{ key: 'ppuflag', value: 'N' }],
      },
      response: answer({
        sessionId: { type: 'string', format: 'uuid' }, appId: { type: 'string' },
        payPerUse: { type: 'boolean', description: 'True when the session is pay-per-use (ppuflag = Y)' },
        memberId: {
          type: ['string', 'null'], description: 'The provisioned member the benefit keys resolved to, if any',
        },
        createdAt: { type: 'string', format: 'date-time' },
      }),
    },
  }),
  typedRoute(RescueBenefits, {
    method: 'GET', path: `${ROADSIDE_PREFIX}/rescue/benefits`, operationId: 'getBenefits',
    summary: "The session member's benefits and usage", tag: TAG, scope: 'roadside',
    variables: (req) => defined({ sessionId: queryString(req, 'sessionId'), appId: queryString(req, 'appId') }),
    result: (d) => d.rescueBenefits,
    docs: {
      query: {
        appId: { type: 'string', description: 'Must be the session\'s appId when sent' },
        sessionId: { type: 'string', required: true },
      },
      response: answer({
        status: { type: 'string', enum: ['Active', 'Inactive'] }, maxClaimCount: { type: 'integer' },
        usageCount: { type: 'integer' }, towToDealershipRequired: { type: 'boolean' },
        membershipExpDate: { type: ['string', 'null'], format: 'date' }, policyNumber: { type: ['string', 'null'] },
        memberId: { type: ['string', 'null'] }, partnerCode: { type: ['string', 'null'] },
        planCode: { type: ['string', 'null'], description: 'The member\'s plan (productType)' },
        payPerUse: { type: 'boolean' }, towMiles: { type: 'number', description: 'Tow miles covered per tow' },
        services: {
          type: 'array',
          items: answer({
            type: { type: 'string', enum: ['Gas', 'Tow', 'Changetire', 'Battery', 'Lockout'] },
            claimCount: { type: 'integer' }, maxClaimCount: { type: 'integer' }, fuelQty: { type: ['number', 'null'] },
            fuelQtyUnit: { type: ['string', 'null'] }, towMiles: { type: ['number', 'null'] },
          }),
        },
      }),
    },
  }),
  typedRoute(ProvisionRescueMember, {
    method: 'POST', path: `${ROADSIDE_PREFIX}/ars_provisioning_v1/formpost`, operationId: 'provisionMember',
    summary: 'Provision a member and an asset (form post)', tag: TAG, scope: 'roadside', status: 201,
    variables: (req) => {
      const body = objectBody(req);
      return {
        input: defined({
          partnerCode: blank(body.partnerCode), memberId: blank(body.memberId),
          assetIntegrationId: blank(body.assetIntegrationId), ...provisioningFields(body),
        }),
      };
    },
    result: (d) => d.provisionRescueMember,
    docs: {
      description: 'Accepts application/x-www-form-urlencoded or JSON. '
        + 'productType names the plan (BASIC, PLUS, PREMIER, OEM); milesPerTow and numberOfEvents override the plan. '
        + 'A member/asset pair already provisioned is 409 (use PUT).',
      contentTypes: ['application/x-www-form-urlencoded', 'application/json'],
      requestBody: closedBody(provisioningInput),
      requestExample: {
        partnerCode: 'ACME', memberId: 'M-1001', assetIntegrationId: 'A-1', productType: 'PLUS', firstName: 'Dana',
        lastName: 'Reyes', state: 'IL', zip: '60606', make: 'Honda', year: 2021, vin: '1HGCM82633A004352',
        effectiveEndDate: '2027-12-31', partnerPay: 'N',
      },
      response: provisioning,
    },
  }),
  typedRoute(RescueProvisioning, {
    method: 'GET',
    path: `${ROADSIDE_PREFIX}/provisioning/formpost/member/:memberId/asset/:assetIntegrationId/partner/:partnerCd`,
    operationId: 'getProvisioning', summary: 'A provisioned member and asset', tag: TAG, scope: 'roadside',
    variables: provisioningKey,
    result: (d, req) => found(
      d.rescueProvisioning, 'Provisioned asset',
      `${req.params.partnerCd}/${req.params.memberId}/${req.params.assetIntegrationId}`,
    ),
    docs: { params: provisioningKeyParams, response: provisioning },
  }),
  typedRoute(UpdateRescueProvisioning, {
    method: 'PUT',
    path: `${ROADSIDE_PREFIX}/provisioning/formpost/member/:memberId/asset/:assetIntegrationId/partner/:partnerCd`,
    operationId: 'updateProvisioning', summary: 'Change a provisioned member and asset (fields sent change)',
    tag: TAG, scope: 'roadside',
    variables: (req) => ({ ...provisioningKey(req), input: provisioningFields(objectBody(req)) }),
    result: (d) => d.updateRescueProvisioning,
    docs: {
      params: provisioningKeyParams, contentTypes: ['application/json', 'application/x-www-form-urlencoded'],
      requestBody: closedBody(provisioningUpdate), requestExample: { milesPerTow: 50, effectiveEndDate: '2028-06-30' },
      response: provisioning,
    },
  }),
  typedRoute(VehicleMakes, {
    method: 'GET', path: `${ROADSIDE_PREFIX}/vehicle/makes`, operationId: 'getMakes', summary: 'Vehicle makes',
    tag: TAG, scope: 'roadside',
    variables: () => ({}),
    result: (d) => ({ makes: d.vehicleMakes }),
    docs: { response: { type: 'object', properties: { makes: { type: 'array', items: { type: 'string' } } } } },
  }),
  typedRoute(VehicleModels, {
    method: 'GET', path: `${ROADSIDE_PREFIX}/vehicle/makes/:make/models`, operationId: 'getModels',
    summary: 'Models of a make (any case; unknown make is 404)', tag: TAG, scope: 'roadside',
    variables: (req) => ({ make: req.params.make }), result: (d) => d.vehicleModels,
    docs: {
      response: {
        type: 'object', properties: { make: { type: 'string' }, models: { type: 'array', items: { type: 'string' } } },
      },
    },
  }),
  typedRoute(RescueAvailability, {
    method: 'GET', path: `${ROADSIDE_PREFIX}/rescue/available`, operationId: 'getAvailability',
    summary: 'Whether rescue services are available at a location now', tag: TAG, scope: 'roadside',
    variables: (req) => {
      const service = queryString(req, 'service') ?? queryString(req, 'serviceType');
      return defined({
        latitude: num(queryString(req, 'latitude') ?? queryString(req, 'lat')),
        longitude: num(queryString(req, 'longitude') ?? queryString(req, 'lon')),
        services: service?.split(',').map((s) => (s.trim().toLowerCase() === 'changetire' ? 'TIRE' : enumValue(s))),
      });
    },
    result: ({ rescueAvailability: a }) => ({
      ...a, services: a.services.map((s) => ({ ...s, service: s.service.toLowerCase() })),
    }),
    docs: {
      description: 'Available means an open provider offering the service has the point inside its coverage radius.',
      query: {
        latitude: { type: 'number', minimum: -90, maximum: 90, required: true, description: 'Alias: lat' },
        longitude: { type: 'number', minimum: -180, maximum: 180, required: true, description: 'Alias: lon' },
        service: {
          type: 'string', pattern: `^(${serviceNames})(,(${serviceNames}))*$`,
          description: 'tire, lockout, gas, tow, battery (comma-separated, any case; all by default). '
            + 'Alias: serviceType',
        },
      },
      response: availabilityAnswer,
    },
  }),
  ...dispatchRoutes,
  typedRoute(QuoteRescue, {
    method: 'POST', path: `${ROADSIDE_PREFIX}/rescue/costs`, operationId: 'getCosts',
    summary: 'Price a rescue from the disablement and destination', tag: TAG, scope: 'roadside',
    variables: (req) => {
      const body = objectBody(req);
      const service = pick(body, 'service', 'serviceType');
      return {
        input: defined({
          sessionId: body.sessionId,
          service: typeof service === 'string' && service.toLowerCase() === 'changetire' ? 'TIRE' : enumValue(service),
          disablementLocation: disablementOf(body), destination: destinationOf(body), towLocationId: body.towLocationId,
          batteryService: enumValue(body.batteryService),
        }),
      };
    },
    result: (d) => d.quoteRescue,
    docs: {
      description: 'Prices with the published price list (docs/roadside.md): '
        + 'service fee, tow miles beyond the covered miles, fuel and parts. `service` defaults to tow.',
      requestBody: closedBody({
        type: 'object', required: ['sessionId', 'disablementLocation'],
        properties: {
          sessionId: { type: 'string' },
          service: { type: 'string', enum: [...REST_SERVICES, 'changetire'], description: 'Any case; tow by default' },
          disablementLocation: locationInput, ...topLevelPoint, destination: locationInput,
          towLocationId: { type: 'string' },
          batteryService: {
            type: 'string', enum: BATTERY_SERVICES, description: 'A replacement adds the battery\'s price',
          },
        },
        description: 'A tow (the default service) needs destination or towLocationId (400 otherwise); '
          + 'at most 250 road miles.',
      }, { serviceType: 'service', ...DISABLEMENT_ALIASES, ...DESTINATION_ALIASES }),
      requestExample: {
        sessionId: '6f1c2d4e-0000-4000-8000-000000000001', service: 'tow', disablementLocation: exampleLocation,
        destination: { latitude: 41.9186, longitude: -87.6686 },
      },
      response: cost,
    },
  }),
  typedRoute(TowLocations, {
    method: 'POST', path: `${ROADSIDE_PREFIX}/rescue/tow/locations`, operationId: 'getTowLocations',
    summary: 'Tow-to destinations near a point, nearest first', tag: TAG, scope: 'roadside',
    variables: (req) => {
      const body = objectBody(req);
      const at = location(pick(body, 'location', 'disablementLocation'), 'location')
        ?? { latitude: num(body.latitude), longitude: num(body.longitude) };
      return defined({
        latitude: at.latitude, longitude: at.longitude, radiusMiles: num(body.radiusMiles), type: enumValue(body.type),
        make: body.make, limit: num(body.limit),
      });
    },
    result: (d) => ({ locations: d.towLocations }),
    docs: {
      requestBody: closedBody({
        type: 'object', description: 'The point as latitude and longitude, or as `location`',
        properties: {
          latitude, longitude, location: locationInput, radiusMiles: { type: 'number', default: 25, maximum: 200 },
          type: { type: 'string', enum: ['REPAIR_SHOP', 'DEALER'], description: 'Any case' },
          make: { type: 'string', description: 'Dealers of this make only' },
          limit: { type: 'integer', default: 10, maximum: 50 },
        },
        anyOf: [{ required: ['latitude', 'longitude'] }, { required: ['location'] }],
      }, { disablementLocation: 'location' }),
      requestExample: { latitude: 41.8781, longitude: -87.6298, radiusMiles: 10, type: 'DEALER' },
      response: towLocationsAnswer,
    },
  }),
  typedRoute(Rescue, {
    method: 'GET', path: `${ROADSIDE_PREFIX}/rescue/reqId/:reqId`, operationId: 'getRequestStatus',
    summary: 'A rescue request and its status', tag: TAG, scope: 'roadside',
    variables: (req) => ({ reqId: req.params.reqId, ...sessionQuery(req) }),
    result: (d, req) => ({ serviceRequest: restRescue(found(d.rescue, 'Rescue request', req.params.reqId)) }),
    docs: { query: sessionQueryDoc, response: answer({ serviceRequest }) },
  }),
  typedRoute(RescueProviders, {
    method: 'GET', path: `${ROADSIDE_PREFIX}/rescue/reqId/:reqId/providers`, operationId: 'getProviders',
    summary: 'The provider dispatched and the others that could serve the rescue', tag: TAG, scope: 'roadside',
    variables: (req) => ({ reqId: req.params.reqId, ...sessionQuery(req) }),
    result: ({ rescueProviders: { rescue, candidates } }) => ({
      requestId: rescue.reqId, status: restStatus(rescue.status),
      providers: candidates.map((c) => ({
        ...c.provider, distanceMiles: c.distanceMiles, etaMinutes: c.etaMinutes, openNow: c.openNow,
        assigned: c.assigned, driver: c.assigned ? rescue.driverName : null,
      })),
    }),
    docs: { query: sessionQueryDoc, response: providersAnswer },
  }),
  typedRoute(CancelRescue, {
    method: 'POST', path: `${ROADSIDE_PREFIX}/rescue/reqId/:reqId/cancel`, operationId: 'cancelRequest',
    summary: 'Cancel a rescue (before APPROACHING, while the ETA is over 15 minutes)', tag: TAG, scope: 'roadside',
    variables: (req) => {
      const body = objectBody(req);
      return defined({ reqId: req.params.reqId, sessionId: body.sessionId, reason: body.reason });
    },
    result: ({ cancelRescue: ack }) => ({ status: ack.status, message: ack.message }),
    docs: {
      description: 'Refused with 409 from APPROACHING on, or while the provider is 15 minutes away or closer. '
        + 'The claim the rescue held is given back.',
      requestBody: closedBody({
        type: 'object', properties: { sessionId: { type: 'string' }, reason: { type: 'string', maxLength: 500 } },
      }),
      requestExample: { sessionId: '6f1c2d4e-0000-4000-8000-000000000001', reason: 'Got the car started' },
      response: ok,
    },
  }),
  typedRoute(RescueEta, {
    method: 'GET', path: `${ROADSIDE_PREFIX}/rescue/eta`, operationId: 'getEta', summary: "A rescue's ETA now",
    tag: TAG, scope: 'roadside',
    variables: (req) => defined({
      reqId: queryString(req, 'reqId') ?? queryString(req, 'requestId'), sessionId: queryString(req, 'sessionId'),
    }),
    result: ({ rescueEta: e }) => ({
      requestId: e.rescue.reqId, status: restStatus(e.rescue.status), eta: e.etaMinutes, etaTime: e.etaAt,
      providerPosition: e.providerPosition, distanceMiles: e.distanceMiles,
    }),
    docs: {
      query: { reqId: { type: 'string', required: true, description: 'Alias: requestId' }, ...sessionQueryDoc },
      response: etaAnswer,
    },
  }),
  typedRoute(UpdateRescueStatus, {
    method: 'POST', path: `${ROADSIDE_PREFIX}/rescue/statusUpdate`, operationId: 'statusUpdate',
    summary: 'Move a rescue along and report the provider position and ETA', tag: TAG, scope: 'roadside',
    variables: (req) => {
      const body = objectBody(req);
      return {
        input: defined({
          reqId: requestIdOf(body), sessionId: body.sessionId, status: enumValue(body.status),
          latitude: num(body.latitude), longitude: num(body.longitude),
          updatedETA: num(pick(body, 'updatedETA', 'updatedEta')), note: body.note,
        }),
      };
    },
    result: ({ updateRescueStatus: ack }) => ({
      status: ack.status, message: ack.message.replace('EN_ROUTE', 'EN-ROUTE'), requestId: ack.rescue.reqId,
      requestStatus: restStatus(ack.rescue.status), eta: ack.rescue.etaMinutes,
    }),
    docs: {
      description: 'Legal moves: BOOKED -> EN-ROUTE -> APPROACHING -> ARRIVED_ONSITE -> COMPLETED, one step at a time; '
        + 'repeating EN-ROUTE or APPROACHING only reports a new position/ETA. Anything else is 409.',
      requestBody: closedBody({
        type: 'object', required: ['requestId', 'status'],
        properties: {
          requestId: { type: 'string' }, sessionId: { type: 'string' },
          status: {
            type: 'string', enum: ['EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED'],
            description: 'The next status (any case; _ for -). BOOKED is 409; CANCELLED is 400 (use /cancel)',
          },
          latitude, longitude, updatedETA: { type: 'integer', minimum: 0, maximum: 1440, description: 'Minutes' },
          note: { type: 'string', maxLength: 500 },
        },
        dependentRequired: { latitude: ['longitude'], longitude: ['latitude'] },
      }, { reqId: 'requestId', updatedEta: 'updatedETA' }),
      requestExample: {
        requestId: '0b8f2c1a-0000-4000-8000-000000000002', sessionId: '6f1c2d4e-0000-4000-8000-000000000001',
        status: 'EN-ROUTE',
        latitude: 41.88, longitude: -87.64, updatedETA: 20,
      },
      response: answer({
        ...ok.properties, requestId: { type: 'string', format: 'uuid' },
        requestStatus: { type: 'string', enum: REST_STATUSES }, eta: minutesToArrive,
      }),
    },
  }),
  typedRoute(SubmitRescueFeedback, {
    method: 'POST', path: `${ROADSIDE_PREFIX}/rescue/feedback`, operationId: 'feedback',
    summary: 'Rate a completed rescue (once)',
    tag: TAG, scope: 'roadside', status: 201,
    variables: (req) => {
      const body = objectBody(req);
      return defined({
        reqId: requestIdOf(body), sessionId: body.sessionId, rating: num(body.rating), comment: body.comment,
      });
    },
    result: ({ submitRescueFeedback: f }) => ({
      status: 'OK', message: 'Feedback recorded', requestId: f.reqId, rating: f.rating, comment: f.comment,
      createdAt: f.createdAt,
    }),
    docs: {
      requestBody: closedBody({
        type: 'object', required: ['requestId', 'rating'],
        properties: {
          requestId: { type: 'string' }, sessionId: { type: 'string' },
          rating: { type: 'integer', minimum: 1, maximum: 5 },
          comment: { type: 'string', maxLength: 2000 },
        },
      }, { reqId: 'requestId' }),
      requestExample: { requestId: '0b8f2c1a-0000-4000-8000-000000000002', rating: 5, comment: 'Quick and friendly' },
      response: feedbackAnswer,
    },
  }),
  typedRoute(UploadProviderFile, {
    method: 'POST', path: `${ROADSIDE_PREFIX}/provider/fileservice/upload`, operationId: 'uploadFile',
    summary: 'Upload a provider file (multipart or base64 JSON)', tag: TAG, scope: 'roadside', status: 201,
    variables: (req) => ({ input: uploadInput(req) }),
    result: (d) => d.uploadProviderFile,
    docs: {
      description: 'JSON `{ requestId?, memberId?, fileType, fileName, contentType, content (base64) }` '
        + 'or multipart/form-data with one file part and the same fields '
        + '(fileName and contentType default to the part\'s). At most 512 KiB (413); '
        + 'JPEG, PNG, GIF, WebP, HEIC, PDF or plain text (415). '
        + 'fileType: PHOTO, INVOICE, RECEIPT, SIGNATURE, DAMAGE_REPORT, OTHER.',
      contentTypes: ['application/json', 'multipart/form-data'],
      requestBody: {
        type: 'object', required: ['fileType'],
        properties: {
          requestId: { type: 'string', description: 'The rescue the file belongs to (alias: reqId)' },
          memberId: { type: 'string' },
          fileType: fileTypeSchema,
          fileName: { type: 'string', description: 'Required in JSON; the part\'s name by default in multipart' },
          contentType: {
            type: 'string', enum: [...ALLOWED_CONTENT_TYPES],
            description: 'Required in JSON; the part\'s type by default in multipart',
          },
          content: {
            type: 'string', contentEncoding: 'base64', maxLength: Math.ceil(MAX_FILE_BYTES / 3) * 4,
            description: `The file, base64, at most ${MAX_FILE_BYTES / 1024} KiB decoded `
              + '(aliases: contentBase64, data); in multipart, a file part instead',
          },
        },
      },
      requestExample: {
        requestId: '0b8f2c1a-0000-4000-8000-000000000002', fileType: 'RECEIPT', fileName: 'receipt.txt',
        contentType: 'text/plain', content: 'UGFpZCAkOTU=',
      },
      response: file,
    },
  }),
  typedRoute(ProviderFiles, {
    method: 'POST', path: `${ROADSIDE_PREFIX}/provider/fileservice/search`, operationId: 'searchFiles',
    summary: 'Search provider files by rescue, member, type and date', tag: TAG, scope: 'roadside',
    variables: (req) => {
      const body = objectBody(req);
      return {
        filter: defined({
          reqId: requestIdOf(body), memberId: body.memberId, fileType: body.fileType,
          from: pick(body, 'from', 'fromDate'), to: pick(body, 'to', 'toDate'), limit: num(body.limit),
        }),
      };
    },
    result: (d) => ({ files: d.providerFiles }),
    docs: {
      requestBody: closedBody({
        type: 'object',
        properties: {
          requestId: { type: 'string' }, memberId: { type: 'string' }, fileType: fileTypeSchema,
          from: { ...day, description: 'YYYY-MM-DD (start of the day, UTC) or an ISO 8601 date-time' },
          to: { ...day, description: 'YYYY-MM-DD (end of the day, UTC) or an ISO 8601 date-time' },
          limit: { type: 'integer', minimum: 1, maximum: 200 },
        },
      }, { reqId: 'requestId', fromDate: 'from', toDate: 'to' }),
      requestExample: { requestId: '0b8f2c1a-0000-4000-8000-000000000002', fileType: 'RECEIPT' },
      response: answer({ files: { type: 'array', items: file } }),
    },
  }),
  typedRoute(ProviderFile, {
    method: 'GET', path: `${ROADSIDE_PREFIX}/provider/fileservice/retrieve/:contentid`, operationId: 'retrieveFile',
    summary: 'A provider file, byte for byte, with its content type', tag: TAG, scope: 'roadside',
    variables: (req) => ({ contentId: req.params.contentid }),
    result: (d, req) => Buffer.from(storedFile(d, req).contentBase64, 'base64'),
    headers: (d, req) => {
      const f = storedFile(d, req);
      return {
        'content-type': f.contentType,
        'content-disposition': `inline; filename*=UTF-8''${encodeURIComponent(f.fileName)}`,
        'x-content-sha256': f.sha256, 'x-content-type-options': 'nosniff',
      };
    },
    docs: {
      description: 'The response body is the stored bytes with the stored content type (not JSON): '
        + 'one of the types the upload accepts. '
        + 'The file\'s metadata (request, member, type, size, upload time) is in POST /provider/fileservice/search.',
      responseContentTypes: ALLOWED_CONTENT_TYPES,
      responseHeaders: {
        'Content-Disposition': {
          description: 'inline, with the stored file name (RFC 8187 filename*)',
          schema: { type: 'string', pattern: '^inline; filename\\*=UTF-8\'\'' },
        },
        'X-Content-SHA256': {
          description: 'SHA-256 of the bytes, hex', schema: { type: 'string', pattern: '^[0-9a-f]{64}$' },
        },
      },
    },
  }),
];

/** Every roadside path but the token endpoint (declared in token.ts). */
export const roadsideRoutes: readonly RestRoute[] = routes;
