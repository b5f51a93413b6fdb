import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Booking, Vehicle } from '../../subgraphs/booking/entities.ts';
import { buildOpenApi } from '../../gateway/rest/openapi.ts';
import { restRoutes } from '../../gateway/rest/index.ts';
import { sharedTestStack } from '../support/shared-stack.ts';
import type { TestStack } from '../support/stack.ts';

const P = '/shared-mobility-insights/v2';
let t: TestStack;

beforeAll(async () => { t = await sharedTestStack({ subgraphs: ['booking', 'scoring'] }); });
afterAll(async () => { await t?.close(); });

let counter = 0;
/** A fresh valid VIN (17 letters or digits) per call. */
const nextVin = () => `REST${String(++counter).padStart(13, '0')}`;

/** Rows of the booking subgraph's database, across organisations. */
async function rows<T extends object>(entity: new () => T, where: Record<string, unknown>): Promise<T[]> {
  const db = t.stack.subgraphs.find((s) => s.name === 'booking')!.db;
  return db.orm.em.fork().find(entity as never, where as never, { filters: false }) as Promise<T[]>;
}

const post = (path: string, body?: unknown, token = t.token) => t.request('POST', `${P}${path}`, { token, body });
const put = (path: string, body?: unknown, token = t.token) => t.request('PUT', `${P}${path}`, { token, body });
const get = (path: string, token = t.token) => t.request('GET', `${P}${path}`, { token });

function expectProblem(res: { status: number; headers: Headers; body: Record<string, unknown> }, status: number, code: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(res.body).toMatchObject({ status, code });
}

/** A vehicle with a paired device. */
async function vehicleWithDevice(device = `dev-${counter + 1}`) {
  const vin = nextVin();
  const res = await post('/vehicles', { VIN: vin, deviceID: device });
  expect(res.status).toBe(201);
  return { vin, device };
}

describe('vehicles', () => {
  it('creates a vehicle from the body (VIN or vin), stored and returned upper-case', async () => {
    const vin = nextVin();
    const res = await post('/vehicles', { VIN: vin.toLowerCase() });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ VIN: vin, vin, deviceID: null, deviceId: null });
    expect(res.body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    const alias = await post('/vehicles', { vin: nextVin() });
    expect(alias.status).toBe(201);
    const [row] = await rows(Vehicle, { vin });
    expect(row).toMatchObject({ vin, orgId: t.org, deviceId: null });
  });

  it('creates a vehicle with the VIN in the path, optionally pairing a device', async () => {
    const vin = nextVin();
    const res = await post(`/vehicles/${vin.toLowerCase()}`, { deviceID: '356938035643809' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ VIN: vin, deviceID: '356938035643809', deviceId: '356938035643809' });
    const noBody = await post(`/vehicles/${nextVin()}`);
    expect(noBody.status).toBe(201);
    const same = await post(`/vehicles/${nextVin()}`, { VIN: `${nextVin()}` });
    expectProblem(same, 400, 'BAD_USER_INPUT');
    expect(same.body.field).toBe('VIN');
  });

  it('answers 409 for a VIN that exists already, in any case and either path form', async () => {
    const vin = nextVin();
    expect((await post('/vehicles', { VIN: vin })).status).toBe(201);
    const again = await post('/vehicles', { VIN: vin.toLowerCase() });
    expectProblem(again, 409, 'CONFLICT');
    expect(again.body.detail).toMatch(/already exists/);
    expectProblem(await post(`/vehicles/${vin}`), 409, 'CONFLICT');
    expect(await rows(Vehicle, { vin })).toHaveLength(1);
  });

  it('refuses a VIN that is not exactly 17 letters or digits, creating nothing', async () => {
    for (const VIN of ['1HGCM82633A00435', '1HGCM82633A0043521', '1HGCM82633A00435-', '1HGCM 2633A004352', 'ÄHGCM82633A004352', 12345678901234, '', null]) {
      const res = await post('/vehicles', { VIN });
      expectProblem(res, 400, 'BAD_USER_INPUT');
    }
    expectProblem(await post('/vehicles', {}), 400, 'BAD_USER_INPUT');
    expectProblem(await post('/vehicles/TOO-SHORT'), 400, 'BAD_USER_INPUT');
    expect(await rows(Vehicle, { vin: { $like: '1HGCM%' } })).toHaveLength(0);
  });

  it('GET returns a vehicle; an unknown VIN is 404 and a malformed one 400', async () => {
    const { vin, device } = await vehicleWithDevice();
    const res = await get(`/vehicles/${vin.toLowerCase()}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ VIN: vin, deviceID: device });
    expectProblem(await get(`/vehicles/${nextVin()}`), 404, 'NOT_FOUND');
    expectProblem(await get('/vehicles/short'), 400, 'BAD_USER_INPUT');
  });

  it('pairs a device with POST /vehicles/{vin}/devices/{imei}, unpairing it from its old vehicle', async () => {
    const { vin: first, device } = await vehicleWithDevice('356938035643810');
    const second = nextVin();
    await post('/vehicles', { VIN: second });
    const res = await post(`/vehicles/${second.toLowerCase()}/devices/${device}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ VIN: second, deviceID: device });
    expect((await get(`/vehicles/${first}`)).body.deviceID).toBeNull();
    expect((await rows(Vehicle, { deviceId: device })).map((v) => v.vin)).toEqual([second]);
    // Pairing the device it already has changes nothing.
    expect((await post(`/vehicles/${second}/devices/${device}`)).body.deviceID).toBe(device);
  });

  it('creating a vehicle with a device another vehicle holds moves the device', async () => {
    const { vin: first, device } = await vehicleWithDevice('356938035643811');
    const second = nextVin();
    expect((await post('/vehicles', { VIN: second, deviceId: device })).body.deviceID).toBe(device);
    expect((await get(`/vehicles/${first}`)).body.deviceID).toBeNull();
  });

  it('the {imei} parameter is a device id of 1 to 64 characters, as documented: a free-form id is paired, a longer one is 400', async () => {
    const param = (buildOpenApi(restRoutes) as unknown as { paths: Record<string, { post: { parameters: { name: string; schema: Record<string, unknown>; description?: string }[] } }> })
      .paths[`${P}/vehicles/{vin}/devices/{imei}`].post.parameters.find((x) => x.name === 'imei')!;
    expect(param.schema).toMatchObject({ type: 'string', minLength: 1, maxLength: 64 });
    expect(param.description).toMatch(/any identifier/);
    const vin = nextVin();
    await post('/vehicles', { VIN: vin });
    expect((await post(`/vehicles/${vin}/devices/not-an-imei`)).body.deviceID).toBe('not-an-imei');
    const tooLong = await post(`/vehicles/${vin}/devices/${'9'.repeat(65)}`);
    expectProblem(tooLong, 400, 'BAD_USER_INPUT');
  });

  it('pairing with a vehicle that was never created is 404 and leaves the device where it was', async () => {
    const { vin, device } = await vehicleWithDevice('356938035643812');
    expectProblem(await post(`/vehicles/${nextVin()}/devices/${device}`), 404, 'NOT_FOUND');
    expect((await get(`/vehicles/${vin}`)).body.deviceID).toBe(device);
  });
});

describe('starting bookings', () => {
  it('starts with only VIN and startTimestamp when a device is paired; ids are generated', async () => {
    const { vin, device } = await vehicleWithDevice();
    const res = await post('/bookings', { VIN: vin, startTimestamp: 1_800_000_000 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      VIN: vin, vin, deviceID: device, deviceId: device, startTimestamp: 1_800_000_000,
      estimatedEndTimestamp: null, actualEndTimestamp: null, status: 'active',
    });
    expect(res.body.bookingID).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.bookingId).toBe(res.body.bookingID);
    expect(res.body.userID).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.userId).toBe(res.body.userID);
    // A generated user id creates no user.
    expectProblem(await get(`/users/${res.body.userID}`), 404, 'NOT_FOUND');
    const [row] = await rows(Booking, { bookingId: res.body.bookingID });
    expect(row).toMatchObject({ orgId: t.org, vin, deviceId: device, startTimestamp: 1_800_000_000, actualEndTimestamp: null });
  });

  it('takes the documented field names and echoes them; null ids are generated', async () => {
    const { vin, device } = await vehicleWithDevice();
    const body = { bookingID: `bk-${vin}`, VIN: vin, userID: 'any user id, not checked', deviceID: device, startTimestamp: 1_000, estimatedEndTimestamp: 2_000 };
    const res = await post('/bookings', body);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ ...body, bookingId: body.bookingID, userId: body.userID, status: 'active' });
    const nulls = await post('/bookings', { VIN: vin, bookingID: null, userID: null, startTimestamp: 2_000 });
    expect(nulls.status).toBe(201);
    expect(nulls.body.bookingID).toMatch(/^[0-9a-f-]{36}$/);
    expect(nulls.body.userID).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('accepts lower-camel aliases and epoch seconds beyond 2038, also as digit strings', async () => {
    const { vin, device } = await vehicleWithDevice();
    const res = await post('/bookings', { bookingId: `camel-${vin}`, vin: vin.toLowerCase(), userId: 'camel-user', deviceId: device, startTimestamp: '4102444800', estimatedEndTimestamp: 4_102_531_200 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ bookingID: `camel-${vin}`, VIN: vin, userID: 'camel-user', startTimestamp: 4_102_444_800, estimatedEndTimestamp: 4_102_531_200 });
  });

  it('a VIN that was never created is 404; a malformed VIN is 400', async () => {
    expectProblem(await post('/bookings', { VIN: nextVin(), deviceID: 'd', startTimestamp: 1 }), 404, 'NOT_FOUND');
    const bad = await post('/bookings', { VIN: 'SHORTVIN', deviceID: 'd', startTimestamp: 1 });
    expectProblem(bad, 400, 'BAD_USER_INPUT');
    expect(bad.body.field).toMatch(/vin/i);
    expectProblem(await post('/bookings', { deviceID: 'd', startTimestamp: 1 }), 400, 'BAD_USER_INPUT');
  });

  it('startTimestamp is required and must be epoch seconds', async () => {
    const { vin } = await vehicleWithDevice();
    const missing = await post('/bookings', { VIN: vin });
    expectProblem(missing, 400, 'BAD_USER_INPUT');
    expect(missing.body.field).toBe('startTimestamp');
    for (const startTimestamp of [-5, 1.5, 'yesterday', true]) expectProblem(await post('/bookings', { VIN: vin, startTimestamp }), 400, 'BAD_USER_INPUT');
    expect(await rows(Booking, { vin })).toHaveLength(0);
  });

  it('estimatedEndTimestamp must be later than startTimestamp', async () => {
    const { vin } = await vehicleWithDevice();
    for (const estimatedEndTimestamp of [1_000, 999]) {
      const res = await post('/bookings', { VIN: vin, startTimestamp: 1_000, estimatedEndTimestamp });
      expectProblem(res, 400, 'BAD_USER_INPUT');
      expect(res.body.field).toMatch(/estimatedEndTimestamp/);
    }
    expect(await rows(Booking, { vin })).toHaveLength(0);
    expect((await post('/bookings', { VIN: vin, startTimestamp: 1_000, estimatedEndTimestamp: 1_001 })).status).toBe(201);
  });

  it('deviceID is required while the VIN has no paired device; supplying one pairs it', async () => {
    const vin = nextVin();
    await post('/vehicles', { VIN: vin });
    const res = await post('/bookings', { VIN: vin, startTimestamp: 1_000 });
    expectProblem(res, 400, 'BAD_USER_INPUT');
    expect(res.body.field).toMatch(/deviceId/);
    expect(res.body.detail).toMatch(/deviceID is required/);
    const ok = await post('/bookings', { VIN: vin, deviceID: 'pair-on-start', startTimestamp: 1_000, estimatedEndTimestamp: 2_000 });
    expect(ok.status).toBe(201);
    expect((await get(`/vehicles/${vin}`)).body.deviceID).toBe('pair-on-start');
    // Now paired: the next booking needs no deviceID.
    expect((await post('/bookings', { VIN: vin, startTimestamp: 2_000 })).body.deviceID).toBe('pair-on-start');
  });

  it('a differing deviceID re-pairs the VIN (and unpairs that device from its old vehicle)', async () => {
    const { vin, device } = await vehicleWithDevice('old-device-1');
    const { vin: other } = await vehicleWithDevice('new-device-1');
    const res = await post('/bookings', { VIN: vin, deviceID: 'new-device-1', startTimestamp: 1_000 });
    expect(res.status).toBe(201);
    expect(res.body.deviceID).toBe('new-device-1');
    expect((await get(`/vehicles/${vin}`)).body.deviceID).toBe('new-device-1');
    expect((await get(`/vehicles/${other}`)).body.deviceID).toBeNull();
    expect(await rows(Vehicle, { deviceId: device })).toHaveLength(0);
  });

  it('a bookingID already used is 409, whatever the vehicle', async () => {
    const { vin } = await vehicleWithDevice();
    const { vin: other } = await vehicleWithDevice();
    expect((await post('/bookings', { VIN: vin, bookingID: `dup-${vin}`, startTimestamp: 1_000 })).status).toBe(201);
    const again = await post('/bookings', { VIN: other, bookingID: `dup-${vin}`, startTimestamp: 5_000 });
    expectProblem(again, 409, 'CONFLICT');
    expect(again.body.detail).toMatch(/already exists/);
    expect(await rows(Booking, { vin: other })).toHaveLength(0);
  });

  it('refuses a period overlapping another booking of the vehicle; touching periods are fine', async () => {
    const { vin } = await vehicleWithDevice();
    expect((await post('/bookings', { VIN: vin, startTimestamp: 1_000, estimatedEndTimestamp: 2_000 })).status).toBe(201);
    for (const [start, end] of [[1_500, 1_600], [500, 1_001], [1_999, undefined], [0, undefined]]) {
      const res = await post('/bookings', { VIN: vin, startTimestamp: start, estimatedEndTimestamp: end });
      expectProblem(res, 409, 'CONFLICT');
      expect(res.body.detail).toMatch(/overlap/);
      expect(res.body.reason).toBe('BOOKING_OVERLAP');
    }
    expect((await post('/bookings', { VIN: vin, startTimestamp: 2_000, estimatedEndTimestamp: 3_000 })).status).toBe(201);
    expect((await post('/bookings', { VIN: vin, startTimestamp: 500, estimatedEndTimestamp: 1_000 })).status).toBe(201);
    // An open-ended booking occupies everything after its start.
    expect((await post('/bookings', { VIN: vin, startTimestamp: 10_000 })).status).toBe(201);
    expectProblem(await post('/bookings', { VIN: vin, startTimestamp: 99_999, estimatedEndTimestamp: 100_000 }), 409, 'CONFLICT');
    expect(await rows(Booking, { vin })).toHaveLength(4);
  });

  it('refuses a body that is not a JSON object', async () => {
    expectProblem(await post('/bookings', '[1]'), 400, 'BAD_USER_INPUT');
    expectProblem(await post('/bookings', '{"VIN":'), 400, 'BAD_USER_INPUT');
  });
});

describe('ending bookings', () => {
  async function started(body: Record<string, unknown> = {}) {
    const { vin } = await vehicleWithDevice();
    const res = await post('/bookings', { VIN: vin, startTimestamp: 1_000, ...body });
    expect(res.status).toBe(201);
    return { vin, bookingID: res.body.bookingID as string };
  }

  it('ends a booking with actualEndTimestamp; ending it again is 409', async () => {
    const { bookingID } = await started({ estimatedEndTimestamp: 5_000 });
    const res = await put(`/bookings/${bookingID}`, { actualEndTimestamp: 4_000 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ bookingID, startTimestamp: 1_000, estimatedEndTimestamp: 5_000, actualEndTimestamp: 4_000, status: 'ended' });
    const again = await put(`/bookings/${bookingID}`, { actualEndTimestamp: 4_500 });
    expectProblem(again, 409, 'CONFLICT');
    expect(again.body.detail).toMatch(/already ended/);
    expect((await get(`/bookings/${bookingID}`)).body.actualEndTimestamp).toBe(4_000);
  });

  it('an unknown booking is 404', async () => {
    expectProblem(await put('/bookings/no-such-booking', { actualEndTimestamp: 2_000 }), 404, 'NOT_FOUND');
    expectProblem(await get('/bookings/no-such-booking'), 404, 'NOT_FOUND');
  });

  it('actualEndTimestamp is required and must be later than the start', async () => {
    const { bookingID } = await started();
    const missing = await put(`/bookings/${bookingID}`, {});
    expectProblem(missing, 400, 'BAD_USER_INPUT');
    expect(missing.body.field).toBe('actualEndTimestamp');
    for (const actualEndTimestamp of [1_000, 999, 'soon']) {
      const res = await put(`/bookings/${bookingID}`, { actualEndTimestamp });
      expectProblem(res, 400, 'BAD_USER_INPUT');
    }
    const [row] = await rows(Booking, { bookingId: bookingID });
    expect(row.actualEndTimestamp).toBeNull();
  });

  it('a bookingID in the body must be the one in the path', async () => {
    const { bookingID } = await started();
    const res = await put(`/bookings/${bookingID}`, { bookingID: 'another-id', actualEndTimestamp: 2_000 });
    expectProblem(res, 400, 'BAD_USER_INPUT');
    expect(res.body.field).toBe('bookingID');
    expect((await get(`/bookings/${bookingID}`)).body.status).toBe('active');
    const ok = await put(`/bookings/${bookingID}`, { bookingId: bookingID, actualEndTimestamp: 2_000 });
    expect(ok.status).toBe(200);
  });

  it('ending frees the rest of the period; an end overlapping a later booking is 409', async () => {
    const { vin, bookingID } = await started();
    await put(`/bookings/${bookingID}`, { actualEndTimestamp: 3_000 });
    const next = await post('/bookings', { VIN: vin, startTimestamp: 3_000, estimatedEndTimestamp: 4_000 });
    expect(next.status).toBe(201);
    const later = await post('/bookings', { VIN: vin, startTimestamp: 6_000 });
    expect(later.status).toBe(201);
    const overrun = await put(`/bookings/${next.body.bookingID}`, { actualEndTimestamp: 6_001 });
    expectProblem(overrun, 409, 'CONFLICT');
    expect(overrun.body.detail).toMatch(/overlap/);
    expect((await put(`/bookings/${next.body.bookingID}`, { actualEndTimestamp: 6_000 })).status).toBe(200);
  });

  it('GET returns the booking', async () => {
    const { vin, bookingID } = await started({ userID: 'reader' });
    const res = await get(`/bookings/${bookingID}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ bookingID, VIN: vin, userID: 'reader', status: 'active' });
  });
});

describe('listing bookings over REST', () => {
  it('filters by vin and status and pages with nextCursor', async () => {
    const { vin } = await vehicleWithDevice();
    for (let i = 0; i < 5; i++) {
      const res = await post('/bookings', { VIN: vin, bookingID: `list-${vin}-${i}`, startTimestamp: 1_000 * (i + 1), estimatedEndTimestamp: 1_000 * (i + 1) + 500 });
      expect(res.status).toBe(201);
    }
    await put(`/bookings/list-${vin}-0`, { actualEndTimestamp: 1_200 });
    const page1 = await t.request('GET', `${P}/bookings?vin=${vin.toLowerCase()}&first=3`, { token: t.token });
    expect(page1.status).toBe(200);
    expect(page1.body.bookings.map((b: { bookingID: string }) => b.bookingID)).toEqual([4, 3, 2].map((i) => `list-${vin}-${i}`));
    expect(page1.body.hasNextPage).toBe(true);
    const page2 = await t.request('GET', `${P}/bookings?vin=${vin}&first=3&after=${page1.body.nextCursor}`, { token: t.token });
    expect(page2.body.bookings.map((b: { bookingID: string }) => b.bookingID)).toEqual([1, 0].map((i) => `list-${vin}-${i}`));
    expect(page2.body).toMatchObject({ hasNextPage: false, nextCursor: null });
    const ended = await t.request('GET', `${P}/bookings?vin=${vin}&status=Ended`, { token: t.token });
    expect(ended.body.bookings.map((b: { bookingID: string }) => b.bookingID)).toEqual([`list-${vin}-0`]);
    expectProblem(await t.request('GET', `${P}/bookings?first=101`, { token: t.token }), 400, 'BAD_USER_INPUT');
    expectProblem(await t.request('GET', `${P}/bookings?after=garbage`, { token: t.token }), 400, 'BAD_USER_INPUT');
  });
});

describe('tokens and the OpenAPI document', () => {
  it('refuses calls without a valid token', async () => {
    expectProblem(await t.request('POST', `${P}/vehicles`, { body: { VIN: nextVin() } }), 401, 'UNAUTHENTICATED');
    expectProblem(await t.request('POST', `${P}/bookings`, { token: 'not-a-jwt', body: { VIN: nextVin(), startTimestamp: 1 } }), 401, 'UNAUTHENTICATED');
    const roadsideOnly = await t.clientFor('org-a', ['roadside']);
    expectProblem(await get(`/vehicles/${nextVin()}`, roadsideOnly.token), 403, 'FORBIDDEN');
  });

  it('documents every booking path with its body and response', async () => {
    const res = await t.request('GET', '/openapi.json');
    const paths = res.body.paths as Record<string, Record<string, { requestBody?: unknown; responses: Record<string, unknown>; operationId: string }>>;
    expect(paths[`${P}/vehicles`].post.operationId).toBe('createVehicle');
    expect(paths[`${P}/vehicles/{vin}`].post.responses['201']).toBeDefined();
    expect(paths[`${P}/vehicles/{vin}/devices/{imei}`].post.operationId).toBe('pairDevice');
    expect(paths[`${P}/bookings`].post.requestBody).toMatchObject({ content: { 'application/json': { schema: { required: ['VIN', 'startTimestamp'] } } } });
    expect(paths[`${P}/bookings/{bookingId}`].put.requestBody).toMatchObject({ content: { 'application/json': { schema: { required: ['actualEndTimestamp'] } } } });
    expect(paths[`${P}/bookings/{bookingId}`].get.responses['200']).toBeDefined();
  });
});
