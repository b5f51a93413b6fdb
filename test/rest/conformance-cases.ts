/**
 * One case per operation of /openapi.json for test/rest/conformance.test.ts, in the order they run:
 * a valid request (its answer becomes the operation's example) and an invalid one (a documented 4xx).
 * Identifiers are fixed and read like the documentation's; what the server draws is kept in `ids`.
 */
import { DEFAULT_CLIENT, sandboxClient, type TestStack } from '../support/stack.ts';
import { CHICAGO } from '../roadside/helpers.ts';
import type { startReceiver, waitFor as WaitFor } from '../webhooks/receiver.ts';

export type Ids = Record<string, string>;
export interface Step {
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  form?: Record<string, string>;
  /** Defaults to the default organisation's token (every scope); null sends none. */
  token?: string | null;
  headers?: Record<string, string>;
}
interface Context { t: TestStack; ids: Ids; waitFor: typeof WaitFor; receiver: Awaited<ReturnType<typeof startReceiver>> }
export interface Case {
  before?: (context: Context) => Promise<void>;
  valid: (ids: Ids) => Step;
  after?: (body: Record<string, unknown>, ids: Ids) => void;
  invalid: (ids: Ids) => Step;
  /**
   * Paged operations: the next page, from the query of the valid answer's `Link: rel="next"`. Its
   * parameters (the area token, the cursor) cannot go with the first page's, so they give their examples.
   */
  next?: (link: URLSearchParams) => Step;
}

const USER = 'driver-001';
const VIN = '1HGCM82633A004352';
const VIN2 = '2T1BURHE0JC014702';
const IMEI = '356938035643809';
const REG_USER = 'driver-001';
const REG_VEHICLE = 'veh-42';
const DEVICE = 'obd-7781';
const PRODUCT = 'Driving Behavior';
const MISSING = 'unknown-0';
const BATCH_CSV = 'id,wkt,radius\ndepot-1,"POINT(-87.6766 41.8813)",0.01\nroute-2,"LINESTRING(-87.6766 41.8813, -87.6718 41.8814)",0.01\n';
const RISK_LINE = 'LINESTRING(-87.6766 41.8813, -87.6718 41.8814)';
const LOCATION = { ...CHICAGO };
const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });
const MEMBER = { memberId: 'M-1001', assetIntegrationId: 'A-1', partnerCd: 'ACME' };

const SOURCE_A_MVR = {
  id: 'mvr_7f3a9c', object: 'motor_vehicle_report', report_type: 'full', full_name: 'Dana Reyes', license_number: 'D1234567', license_state: 'CA',
  license_status: 'VALID', license_class: 'C', issued_date: '2021-04-02', first_issued_date: '2009-07-15', expiration_date: '2030-04-02',
  restrictions: [], endorsements: [], violations: [{ type: 'Speeding', description: 'Speeding 11-15 over', acd_code: 'S93', violation_date: '2024-05-01', conviction_date: '2024-06-10', state: 'CA', points: 1 }],
  accidents: [], suspensions: [], created_at: '2026-01-15T12:00:00Z',
};
const SOURCE_B_MVR = {
  reportId: 'SB-2026-000481', reportKind: 'FULL', orderedAt: '2026-01-15T12:00:00Z',
  driver: { firstName: 'Dana', lastName: 'Reyes', dateOfBirth: '1988-02-11' },
  license: { number: 'R200-4417-9921', jurisdiction: 'IL', status: 'VALID', class: 'D', issueDate: '2022-02-11', originalIssueDate: '2006-03-01', expirationDate: '2030-02-11', restrictions: [], endorsements: [] },
  events: [{ eventType: 'ACCIDENT', eventDate: '2024-01-09', description: 'Intersection collision', atFault: false, injury: true }],
};
const rescue = (ids: Ids, session: string, extra: Record<string, unknown>): Step => ({ body: { sessionId: ids[session], disablementLocation: LOCATION, vehicle: { make: 'Honda', model: 'Civic', year: 2021, color: 'Blue' }, ...extra } });
const newSession = (key: string) => async ({ t, ids }: Context) => {
  const res = await t.request('POST', '/services/roadside/v1/rescue/session', { token: t.token, body: { appId: 'fleet-app', benefits: [{ key: 'vin', value: VIN }], otherInfo: [{ key: 'ppuflag', value: 'N' }] } });
  if (res.status !== 201) throw new Error(`session: ${res.status} ${JSON.stringify(res.body)}`);
  ids[key] = res.body.sessionId;
};
/** Every crash filter parameter, each name in the spelling the summaries return (a list's name holding a comma kept whole). */
const RISK_FILTER = {
  years: '2013,2014,2015', months: '1,2,3,4,5,6,7,8,9,10,11,12', daysOfWeek: '1,2,3,4,5,6,7', hours: '0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23',
  lightConditions: 'Daylight,Dark - Lighted', weather: 'Clear,Fog, Smog, Smoke', functionClasses: 'Principal Arterial - Other,Minor Arterial,Local',
  ruralUrban: 'URBAN', drunkDriver: 'false', pedestrians: 'true', minFatalities: '1',
};
/** The filter parameters that keep every crash (paged reads need a second page). */
const RISK_FILTER_ALL = { years: '2013,2014,2015', daysOfWeek: '1,2,3,4,5,6,7', minFatalities: '1' };
/** Invalid filters: each read refuses one. */
const RISK_BAD_FILTER: Record<string, string>[] = [{ geometry: 'not a geometry' }, { hours: '24' }, { weather: 'Sunny' }, { drunkDriver: 'maybe' }];
let badFilters = 0;
/** A Risk Index read with every parameter (`wkt` is an alias of `geometry`: both name the same line), the crash filter's included. */
const riskCase = (limit = false): Case => ({
  // Paged reads take a wider buffer, so that a second page follows.
  valid: () => ({ token: null, query: {
    geometry: RISK_LINE, wkt: RISK_LINE, radius: limit ? '0.01' : '0.002', queryMethod: 'ContainsBuffer', ...(limit ? { limit: '2', ...RISK_FILTER_ALL } : RISK_FILTER),
  } }),
  invalid: () => ({ token: null, query: { geometry: RISK_LINE, ...RISK_BAD_FILTER[badFilters++ % RISK_BAD_FILTER.length] } }),
  ...(limit ? { next: nextPage } : {}),
});
/** The next page as its link gives it, its size given as `first` (the GraphQL name) instead of `limit`. */
const nextPage = (link: URLSearchParams): Step => {
  const { limit, ...query } = Object.fromEntries(link);
  return { token: null, query: { ...query, first: limit } };
};
const exportCase = (format: string, limit: string, invalid: Record<string, string>): Case => ({
  valid: () => ({ token: null, query: { geometry: RISK_LINE, wkt: RISK_LINE, radius: '0.01', queryMethod: 'ContainsBuffer', format, limit, ...RISK_FILTER_ALL } }),
  invalid: () => ({ token: null, query: { geometry: RISK_LINE, ...invalid } }),
  next: (link) => ({ token: null, query: Object.fromEntries(link) }),
});

export const CASES: Record<string, Case> = {
  // Tokens
  generateToken: {
    valid: () => ({ token: null, form: { grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id, client_secret: DEFAULT_CLIENT.secret } }),
    invalid: () => ({ token: null, form: { grant_type: 'password', client_id: DEFAULT_CLIENT.id, client_secret: DEFAULT_CLIENT.secret } }),
  },
  roadsideAccessToken: {
    valid: () => ({ token: null, query: { grant_type: 'client_credentials' }, headers: basic(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret) }),
    invalid: () => ({ token: null, query: { grant_type: 'client_credentials' }, headers: basic(DEFAULT_CLIENT.id, 'wrong-secret') }),
  },
  // Admin
  createClient: {
    valid: (ids) => ({ token: ids.adminToken, body: { organisation: 'org-partner', scopes: ['b2b'] } }),
    after: (body, ids) => { ids.clientId = String(body.clientId); },
    invalid: (ids) => ({ token: ids.adminToken, body: { scopes: ['b2b'] } }),
  },
  listClients: { valid: (ids) => ({ token: ids.adminToken }), invalid: () => ({ token: null }) },
  rotateClientSecret: { valid: (ids) => ({ token: ids.adminToken, params: { clientId: ids.clientId } }), invalid: (ids) => ({ token: ids.adminToken, params: { clientId: MISSING } }) },
  disableClient: { valid: (ids) => ({ token: ids.adminToken, params: { clientId: ids.clientId } }), invalid: (ids) => ({ token: ids.adminToken, params: { clientId: MISSING } }) },
  enableClient: { valid: (ids) => ({ token: ids.adminToken, params: { clientId: ids.clientId } }), invalid: (ids) => ({ token: ids.adminToken, params: { clientId: MISSING } }) },
  trustIssuer: {
    valid: (ids) => ({
      token: ids.adminToken,
      body: { issuer: 'https://login.acme.example/realms/fleet', organisation: 'org-partner', audience: 'https://graph.example.com/', scopesClaim: 'roles', scopeMap: { 'fleet-manager': ['b2b'], dispatcher: ['b2b', 'roadside'] } },
    }),
    after: (body, ids) => { ids.issuerId = String(body.id); },
    invalid: (ids) => ({ token: ids.adminToken, body: { issuer: 'https://10.0.0.1/realms/fleet', organisation: 'org-partner', audience: 'https://graph.example.com/' } }),
  },
  listIssuers: { valid: (ids) => ({ token: ids.adminToken }), invalid: () => ({ token: null }) },
  distrustIssuer: { valid: (ids) => ({ token: ids.adminToken, params: { issuerId: ids.issuerId } }), invalid: (ids) => ({ token: ids.adminToken, params: { issuerId: MISSING } }) },
  publishManifest: {
    valid: (ids) => ({ token: ids.adminToken, body: { clientId: ids.clientId, name: 'fleet-app 1.4.0', manifest: { 'fleet-app-user-v1': 'query User($id: ID!) { user(userId: $id) { id homeZip } }' } } }),
    after: (body, ids) => { ids.manifestId = String(body.manifestId); },
    invalid: (ids) => ({ token: ids.adminToken, body: { clientId: ids.clientId, manifest: { 'fleet-app-user-v1': '{ broken' } } }),
  },
  listManifests: { valid: (ids) => ({ token: ids.adminToken, query: { clientId: ids.clientId } }), invalid: (ids) => ({ token: ids.adminToken, query: { clientId: MISSING } }) },
  setTrustMode: {
    valid: (ids) => ({ token: ids.adminToken, body: { clientId: ids.clientId, mode: 'audit' } }),
    invalid: (ids) => ({ token: ids.adminToken, body: { clientId: ids.clientId, mode: 'sometimes' } }),
  },
  retireManifest: { valid: (ids) => ({ token: ids.adminToken, params: { manifestId: ids.manifestId } }), invalid: (ids) => ({ token: ids.adminToken, params: { manifestId: 'not-a-uuid' } }) },
  // Webhooks: the subscription first, so the rescue below delivers to it
  createWebhookSubscription: {
    valid: (ids) => ({ body: { url: `${ids.receiverUrl}/hooks/fleet`, eventTypes: ['rescue.status_changed'], description: 'Dispatch board' } }),
    after: (body, ids) => { ids.subscriptionId = String(body.id); },
    invalid: () => ({ body: { url: 'not a url', eventTypes: ['rescue.status_changed'] } }),
  },
  listWebhookSubscriptions: { valid: () => ({}), invalid: () => ({ token: null }) },
  getWebhookSubscription: { valid: (ids) => ({ params: { id: ids.subscriptionId } }), invalid: () => ({ params: { id: MISSING } }) },
  // Booking and scoring
  createUser: {
    valid: () => ({ body: { userID: USER, dateOfBirth: '1988-02-11', homeZip: '60601' } }),
    invalid: () => ({ body: { homeZip: 'not-a-zip' } }),
  },
  createUserWithId: {
    valid: () => ({ params: { userId: 'driver-002' }, body: { dateOfBirth: '1990-06-30', homeZip: '60602' } }),
    invalid: () => ({ params: { userId: 'driver-003' }, body: { homeZip: 'not-a-zip' } }),
  },
  getUser: { valid: () => ({ params: { userId: USER } }), invalid: () => ({ params: { userId: MISSING } }) },
  updateUser: { valid: () => ({ params: { userId: 'driver-002' }, body: { homeZip: '60603' } }), invalid: () => ({ params: { userId: MISSING }, body: { homeZip: '60603' } }) },
  patchUser: { valid: () => ({ params: { userId: 'driver-002' }, body: { dateOfBirth: null } }), invalid: () => ({ params: { userId: 'driver-002' }, body: { homeZip: 'not-a-zip' } }) },
  enrollUser: { valid: () => ({ params: { userId: USER }, body: { enrollmentStatus: 'accepted' } }), invalid: () => ({ params: { userId: USER }, body: { enrollmentStatus: 'bogus' } }) },
  createSourceAMVR: { valid: () => ({ params: { userId: USER }, body: SOURCE_A_MVR }), invalid: () => ({ params: { userId: USER }, body: '{"id":' }) },
  createSourceBMVR: { valid: () => ({ params: { userId: 'driver-002' }, body: SOURCE_B_MVR }), invalid: () => ({ params: { userId: 'driver-002' }, body: '{"reportId":' }) },
  getPrequalCoverageScore: { valid: () => ({ params: { userId: USER } }), invalid: () => ({ params: { userId: MISSING } }) },
  createVehicle: { valid: () => ({ body: { VIN, deviceID: IMEI } }), invalid: () => ({ body: { VIN: 'not-a-vin' } }) },
  createVehicleWithVin: { valid: () => ({ params: { vin: VIN2 }, body: { deviceID: '356938035643810' } }), invalid: () => ({ params: { vin: 'not-a-vin' }, body: {} }) },
  getVehicle: { valid: () => ({ params: { vin: VIN } }), invalid: () => ({ params: { vin: '5YJ3E1EA7KF317000' } }) },
  pairDevice: { valid: () => ({ params: { vin: VIN2, imei: '356938035643811' } }), invalid: () => ({ params: { vin: '5YJ3E1EA7KF317000', imei: '356938035643811' } }) },
  startBooking: {
    valid: () => ({ body: { VIN, userID: USER, deviceID: IMEI, startTimestamp: 1795000000, estimatedEndTimestamp: 1795086400 } }),
    after: (body, ids) => { ids.bookingId = String(body.bookingID ?? body.bookingId); },
    invalid: () => ({ body: { userID: USER } }),
  },
  getBooking: { valid: (ids) => ({ params: { bookingId: ids.bookingId } }), invalid: () => ({ params: { bookingId: MISSING } }) },
  listBookings: {
    // a second booking, and the cursor after the first one
    before: async ({ t, ids }) => {
      const started = await t.request('POST', '/shared-mobility-insights/v2/bookings', { token: t.token, body: { VIN: VIN2, userID: 'driver-002', startTimestamp: 1795003600 } });
      if (started.status !== 201) throw new Error(`booking: ${started.status} ${JSON.stringify(started.body)}`);
      ids.bookingsCursor = String((await t.request('GET', '/shared-mobility-insights/v2/bookings?first=1', { token: t.token })).body.nextCursor);
    },
    valid: (ids) => ({ query: { vin: VIN, userId: USER, status: 'active', startFrom: '1794000000', startTo: '1796000000', first: '10', after: ids.bookingsCursor } }),
    invalid: () => ({ query: { first: '-1' } }),
  },
  endBooking: { valid: (ids) => ({ params: { bookingId: ids.bookingId }, body: { actualEndTimestamp: 1795080000 } }), invalid: () => ({ params: { bookingId: MISSING }, body: { actualEndTimestamp: 1795080000 } }) },
  // Risk Index (public)
  all: riskCase(true),
  riskInfo: riskCase(),
  accidentSummary: riskCase(),
  farsInfo: riskCase(true),
  realtimeTraffic: riskCase(),
  historicalTraffic: riskCase(),
  map: riskCase(),
  mapLayers: riskCase(),
  exportCells: exportCase('geojson', '1', { format: 'kml' }),
  exportCrashes: exportCase('geojson', '2', { limit: '5001' }),
  // Registration
  createRegisteredUser: { valid: () => ({ body: { userId: REG_USER } }), invalid: () => ({ body: { userId: 42 } }) },
  getRegisteredUser: { valid: () => ({ params: { userId: REG_USER } }), invalid: () => ({ params: { userId: MISSING } }) },
  createRegisteredVehicle: { valid: () => ({ body: { vehicleId: REG_VEHICLE, vin: VIN, make: 'Honda', model: 'Accord', year: 2021, userId: REG_USER } }), invalid: () => ({ body: { vehicleId: 'veh-45', year: 'new' } }) },
  getRegisteredVehicle: { valid: () => ({ params: { vehicleId: REG_VEHICLE } }), invalid: () => ({ params: { vehicleId: MISSING } }) },
  updateRegisteredVehicle: { valid: () => ({ params: { vehicleId: REG_VEHICLE }, body: { make: 'Honda', model: 'Civic' } }), invalid: () => ({ params: { vehicleId: MISSING }, body: { make: 'Honda' } }) },
  createRegisteredVehicleWithDevices: {
    valid: () => ({ body: { vehicleId: 'veh-43', vin: VIN2, userId: REG_USER, devices: [{ deviceId: 'obd-7782', type: 'obd' }] } }),
    invalid: () => ({ body: { vehicleId: 'veh-44' } }),
  },
  assignDeviceToUser: { valid: () => ({ params: { deviceId: DEVICE, userId: REG_USER }, body: { effectiveDate: '2026-01-15', type: 'mobile' } }), invalid: () => ({ params: { deviceId: DEVICE, userId: MISSING }, body: { effectiveDate: '2026-01-15', type: 'mobile' } }) },
  getDevice: { valid: () => ({ params: { deviceId: DEVICE } }), invalid: () => ({ params: { deviceId: MISSING } }) },
  getUserDevices: { valid: () => ({ params: { userId: REG_USER }, query: { includeHistory: 'true' } }), invalid: () => ({ params: { userId: MISSING } }) },
  getUserByDevice: { valid: () => ({ params: { deviceId: DEVICE } }), invalid: () => ({ params: { deviceId: MISSING } }) },
  associateDeviceWithVehicle: { valid: () => ({ params: { deviceId: DEVICE, vehicleId: REG_VEHICLE }, body: { effectiveDate: '2026-01-15' } }), invalid: () => ({ params: { deviceId: DEVICE, vehicleId: MISSING }, body: { effectiveDate: '2026-01-15' } }) },
  recordConsent: {
    // a product needs both consents: the second one is recorded first
    before: async ({ t }) => {
      const res = await t.request('POST', '/registration/v2/consents', { token: t.token, body: { userId: REG_USER, type: 'driving-data-sharing', version: '2.1', granted: true, timestamp: '2026-01-15T12:00:00Z', source: 'mobile-app' } });
      if (res.status !== 201) throw new Error(`consent: ${res.status} ${JSON.stringify(res.body)}`);
    },
    valid: () => ({ body: { userId: REG_USER, type: 'location-tracking', version: '2.1', granted: true, timestamp: '2026-01-15T12:00:00Z', source: 'mobile-app' } }),
    invalid: () => ({ body: { userId: REG_USER, type: 'location-tracking' } }),
  },
  getConsents: { valid: () => ({ params: { userId: REG_USER } }), invalid: () => ({ params: { userId: MISSING } }) },
  registerUserProducts: { valid: () => ({ body: { userId: REG_USER, products: [PRODUCT], additionalParameters: { programCode: 'FLEET-7' } } }), invalid: () => ({ body: { userId: REG_USER } }) },
  registerUserProduct: { valid: () => ({ params: { userId: REG_USER, productName: PRODUCT }, body: {} }), invalid: () => ({ params: { userId: MISSING, productName: PRODUCT }, body: {} }) },
  unenrollUserProduct: { valid: () => ({ params: { userId: REG_USER, productName: PRODUCT } }), invalid: () => ({ params: { userId: MISSING, productName: PRODUCT } }) },
  registerVehicleProduct: { valid: () => ({ params: { productName: PRODUCT, vehicleId: REG_VEHICLE }, body: {} }), invalid: () => ({ params: { productName: PRODUCT, vehicleId: MISSING }, body: {} }) },
  // obd-7782's association started today: a replacement cannot take effect before it
  replaceDevice: { valid: () => ({ params: { deviceId: 'obd-7782' }, body: { effectiveDate: new Date().toISOString().slice(0, 10), newDeviceId: 'obd-7783' } }), invalid: () => ({ params: { deviceId: 'obd-7783' }, body: {} }) },
  replaceUserDevice: {
    // a user with one active device
    before: async ({ t }) => {
      for (const [method, path, body] of [['POST', '/registration/v2/users', { userId: 'driver-002' }], ['PUT', '/registration/v2/devices/phone-0190/users/driver-002', { effectiveDate: '2026-01-15', type: 'mobile' }]] as const) {
        const res = await t.request(method, path, { token: t.token, body });
        if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    },
    valid: () => ({ params: { userId: 'driver-002' }, body: { effectiveDate: '2026-01-16', newDeviceId: 'phone-0191' } }),
    invalid: () => ({ params: { userId: 'driver-002' }, body: {} }),
  },
  endUserDeviceAssociation: { valid: () => ({ params: { userId: 'driver-002', deviceId: 'phone-0191' }, body: { effectiveEndDate: '2026-12-31' } }), invalid: () => ({ params: { userId: 'driver-002', deviceId: 'phone-0191' }, body: { effectiveEndDate: 'someday' } }) },
  setDeviceStatus: { valid: () => ({ params: { deviceId: DEVICE }, body: { status: 'Inactive' } }), invalid: () => ({ params: { deviceId: DEVICE }, body: { status: 'bogus' } }) },
  setUserActivation: { valid: () => ({ params: { userId: REG_USER }, body: { status: 'Inactive', reason: 'contract ended' } }), invalid: () => ({ params: { userId: REG_USER }, body: { status: 'bogus' } }) },
  changeUserActivation: { valid: () => ({ params: { userId: REG_USER }, body: { active: true } }), invalid: () => ({ params: { userId: REG_USER }, body: { active: 'yes' } }) },
  // Roadside
  provisionMember: {
    valid: () => ({
      form: {
        partnerCode: MEMBER.partnerCd, memberId: MEMBER.memberId, assetIntegrationId: MEMBER.assetIntegrationId, productType: 'PLUS', firstName: 'Dana', lastName: 'Reyes',
        address1: '1 N State St', city: 'Chicago', state: 'IL', zip: '60602', emailAddress: 'dana@example.com', phone: '+1 312 555 0199', companyName: 'Acme Fleet',
        make: 'honda', year: '2021', vin: VIN, effectiveEndDate: '2030-12-31', milesPerTow: '10', numberOfEvents: '4', partnerPay: 'N', serviceWeight: 'light',
      },
    }),
    invalid: () => ({ form: { partnerCode: MEMBER.partnerCd } }),
  },
  getProvisioning: { valid: () => ({ params: MEMBER }), invalid: () => ({ params: { ...MEMBER, memberId: MISSING } }) },
  updateProvisioning: { valid: () => ({ params: MEMBER, body: { milesPerTow: 50, effectiveEndDate: '2030-12-31' } }), invalid: () => ({ params: MEMBER, body: { milesPerTow: 'fifty' } }) },
  getMakes: { valid: () => ({}), invalid: () => ({ token: null }) },
  getModels: { valid: () => ({ params: { make: 'honda' } }), invalid: () => ({ params: { make: 'no-such-make' } }) },
  getAvailability: { valid: () => ({ query: { latitude: String(LOCATION.latitude), longitude: String(LOCATION.longitude), service: 'tow' } }), invalid: () => ({ query: { latitude: 'north', longitude: '0' } }) },
  getTowLocations: { valid: () => ({ body: { latitude: LOCATION.latitude, longitude: LOCATION.longitude, radiusMiles: 10, type: 'DEALER' } }), invalid: () => ({ body: { latitude: 'north' } }) },
  createSession: {
    valid: () => ({ body: { appId: 'fleet-app', benefits: [{ key: 'vin', value: VIN }], otherInfo: [{ key: 'ppuflag', value: 'N' }] } }),
    after: (body, ids) => { ids.sessionId = String(body.sessionId); },
    invalid: () => ({ body: { appId: 'fleet-app', benefits: 'none' } }),
  },
  getBenefits: { valid: (ids) => ({ query: { appId: 'fleet-app', sessionId: ids.sessionId } }), invalid: () => ({ query: { sessionId: MISSING } }) },
  getCosts: {
    valid: (ids) => ({ body: { sessionId: ids.sessionId, service: 'tow', disablementLocation: LOCATION, towLocationId: 'TL-CHI-03' } }),
    invalid: (ids) => ({ body: { sessionId: ids.sessionId, service: 'teleport', disablementLocation: LOCATION } }),
  },
  createTowRescue: {
    valid: (ids) => rescue(ids, 'sessionId', { towLocationId: 'TL-CHI-03' }),
    after: (body, ids) => { ids.reqId = String(body.requestId); },
    invalid: (ids) => rescue(ids, 'sessionId', {}),
  },
  getRequestStatus: { valid: (ids) => ({ params: { reqId: ids.reqId }, query: { sessionId: ids.sessionId } }), invalid: (ids) => ({ params: { reqId: MISSING }, query: { sessionId: ids.sessionId } }) },
  getProviders: { valid: (ids) => ({ params: { reqId: ids.reqId }, query: { sessionId: ids.sessionId } }), invalid: (ids) => ({ params: { reqId: MISSING }, query: { sessionId: ids.sessionId } }) },
  getEta: { valid: (ids) => ({ query: { reqId: ids.reqId, sessionId: ids.sessionId } }), invalid: (ids) => ({ query: { reqId: MISSING, sessionId: ids.sessionId } }) },
  statusUpdate: {
    before: async ({ t, ids }) => {
      for (const status of ['EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE']) {
        const res = await t.request('POST', '/services/roadside/v1/rescue/statusUpdate', { token: t.token, body: { requestId: ids.reqId, sessionId: ids.sessionId, status } });
        if (res.status !== 200) throw new Error(`${status}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    },
    valid: (ids) => ({ body: { requestId: ids.reqId, sessionId: ids.sessionId, status: 'COMPLETED' } }),
    invalid: (ids) => ({ body: { requestId: ids.reqId, status: 'TELEPORTED' } }),
  },
  feedback: { valid: (ids) => ({ body: { requestId: ids.reqId, sessionId: ids.sessionId, rating: 5, comment: 'Quick and friendly' } }), invalid: (ids) => ({ body: { requestId: ids.reqId, rating: 11 } }) },
  uploadFile: {
    valid: (ids) => ({ body: { requestId: ids.reqId, fileType: 'RECEIPT', fileName: 'receipt.txt', contentType: 'text/plain', content: Buffer.from('Paid $95').toString('base64') } }),
    after: (body, ids) => { ids.contentId = String(body.contentId); },
    invalid: (ids) => ({ body: { requestId: ids.reqId, fileType: 'SELFIE', fileName: 'a.txt', contentType: 'text/plain', content: 'UGFpZA==' } }),
  },
  searchFiles: { valid: (ids) => ({ body: { requestId: ids.reqId, fileType: 'RECEIPT' } }), invalid: (ids) => ({ body: { requestId: ids.reqId, fileType: 'SELFIE' } }) },
  retrieveFile: { valid: (ids) => ({ params: { contentid: ids.contentId } }), invalid: () => ({ params: { contentid: MISSING } }) },
  createBatteryRescue: { before: newSession('batterySession'), valid: (ids) => rescue(ids, 'batterySession', { batteryService: 'JUMP' }), after: (body, ids) => { ids.batteryReqId = String(body.requestId); }, invalid: (ids) => rescue(ids, 'batterySession', { batteryService: 'KISS' }) },
  cancelRequest: {
    valid: (ids) => ({ params: { reqId: ids.batteryReqId }, body: { sessionId: ids.batterySession, reason: 'Got the car started' } }),
    invalid: () => ({ params: { reqId: MISSING }, body: { reason: 'Got the car started' } }),
  },
  createTireRescue: { before: newSession('tireSession'), valid: (ids) => rescue(ids, 'tireSession', { spareAvailable: true }), invalid: (ids) => rescue(ids, 'tireSession', { spareAvailable: false }) },
  createLockoutRescue: { before: newSession('lockoutSession'), valid: (ids) => rescue(ids, 'lockoutSession', { keysLocation: 'IN_VEHICLE' }), invalid: (ids) => rescue(ids, 'lockoutSession', { keysLocation: 'ON_THE_MOON' }) },
  createGasRescue: { before: newSession('gasSession'), valid: (ids) => rescue(ids, 'gasSession', { fuelType: 'REGULAR' }), invalid: (ids) => rescue(ids, 'gasSession', { fuelType: 'KEROSENE' }) },
  // Webhooks: the rescue's status changes were delivered
  listWebhookDeliveries: {
    before: async ({ t, ids, waitFor }) => {
      const delivered = await waitFor(async () => (await t.request('GET', `/platform/webhooks/v1/subscriptions/${ids.subscriptionId}/deliveries?status=succeeded`, { token: t.token })).body.deliveries?.[0], 10_000, 'a delivery');
      ids.deliveryId = String((delivered as { id: string }).id);
    },
    valid: (ids) => ({ params: { id: ids.subscriptionId }, query: { status: 'succeeded', first: '1' } }),
    invalid: (ids) => ({ params: { id: ids.subscriptionId }, query: { status: 'lost' } }),
  },
  getWebhookDelivery: { valid: (ids) => ({ params: { id: ids.subscriptionId, deliveryId: ids.deliveryId } }), invalid: (ids) => ({ params: { id: ids.subscriptionId, deliveryId: MISSING } }) },
  retryWebhookDelivery: { valid: (ids) => ({ params: { id: ids.subscriptionId, deliveryId: ids.deliveryId } }), invalid: (ids) => ({ params: { id: ids.subscriptionId, deliveryId: MISSING } }) },
  updateWebhookSubscription: {
    valid: (ids) => ({ params: { id: ids.subscriptionId }, body: { paused: false } }),
    invalid: (ids) => ({ params: { id: ids.subscriptionId }, body: { url: 'https://10.0.0.1/hooks' } }),
  },
  rotateWebhookSecret: {
    valid: (ids) => ({ params: { id: ids.subscriptionId }, body: { overlapSeconds: 60 } }),
    invalid: (ids) => ({ params: { id: ids.subscriptionId }, body: { overlapSeconds: 604_801 } }),
  },
  sendTestWebhook: { valid: (ids) => ({ params: { id: ids.subscriptionId } }), invalid: () => ({ params: { id: MISSING } }) },
  recoverWebhookDeliveries: {
    valid: (ids) => ({ params: { id: ids.subscriptionId }, body: { since: '2026-01-01T00:00:00Z' } }),
    invalid: (ids) => ({ params: { id: ids.subscriptionId }, body: { since: 'yesterday' } }),
  },
  listWebhookEvents: {
    before: async ({ t, ids, waitFor }) => {
      const listed = await t.request('GET', '/platform/webhooks/v1/events?first=1', { token: t.token });
      ids.eventId = String((listed.body.events?.[0] as { id: string }).id);
      // The example lists the newest status change: once its delivery is final, as the committed example shows it.
      await waitFor(async () => {
        const newest = (await t.request('GET', '/platform/webhooks/v1/events?type=rescue.status_changed&first=1', { token: t.token })).body.events?.[0];
        return (newest as { deliveries?: { pending: number } } | undefined)?.deliveries?.pending === 0 || undefined;
      }, 10_000, 'the newest status change delivered');
    },
    valid: () => ({ query: { type: 'rescue.status_changed', first: '1' } }),
    invalid: () => ({ query: { deliveryState: 'lost' } }),
  },
  getWebhookEvent: { valid: (ids) => ({ params: { id: ids.eventId } }), invalid: () => ({ params: { id: MISSING } }) },
  deleteWebhookSubscription: { valid: (ids) => ({ params: { id: ids.subscriptionId } }), invalid: () => ({ params: { id: MISSING } }) },
  // Risk Index batches: a two-row job scored, and a long one cancelled before the walk cancels it again
  submitRiskBatch: {
    valid: () => ({ body: BATCH_CSV, headers: { 'content-type': 'text/csv' } }),
    after: (body, ids) => { ids.batchId = String(body.id); },
    invalid: () => ({ body: 'name,geometry\nd1,POINT(0 0)\n', headers: { 'content-type': 'text/csv' } }),
  },
  getRiskBatch: {
    before: async ({ t, ids, waitFor }) => {
      await waitFor(async () => (await t.request('GET', `/riskIndex/v1/batches/${ids.batchId}`, { token: t.token })).body.status === 'SUCCEEDED' || undefined, 60_000, 'the batch scored');
    },
    valid: (ids) => ({ params: { id: ids.batchId } }),
    invalid: () => ({ params: { id: MISSING } }),
  },
  getRiskBatchResult: {
    valid: (ids) => ({ params: { id: ids.batchId }, query: { format: 'csv' } }),
    invalid: (ids) => ({ params: { id: ids.batchId }, query: { format: 'kml' } }),
  },
  cancelRiskBatch: {
    before: async ({ t, ids }) => {
      const rows = Array.from({ length: 2000 }, (_, i) => `c${i},"POINT(-87.${6000 + i} 41.88)",0.01`);
      const long = await t.request('POST', '/riskIndex/v1/batches', { token: t.token, body: ['id,wkt,radius', ...rows].join('\n'), headers: { 'content-type': 'text/csv' } });
      ids.cancelledBatchId = String(long.body.id);
      await t.request('DELETE', `/riskIndex/v1/batches/${ids.cancelledBatchId}`, { token: t.token });
    },
    valid: (ids) => ({ params: { id: ids.cancelledBatchId } }),
    invalid: () => ({ params: { id: MISSING } }),
  },
  // The sandbox: emptied with a sandbox client's token; the live organisation's is refused
  resetSandbox: {
    before: async ({ t, ids }) => {
      ids.sandboxToken = (await sandboxClient(t, 'docs-org', ids.adminToken)).token;
    },
    valid: (ids) => ({ token: ids.sandboxToken }),
    invalid: () => ({}),
  },
};
