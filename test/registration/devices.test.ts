import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack } from '../support/shared-stack.ts';
import type { TestStack } from '../support/stack.ts';
import { registrationRoutes } from '../../subgraphs/registration/rest.ts';

const R = '/registration/v2';
let t: TestStack;

beforeAll(async () => {
  t = await sharedTestStack({ subgraphs: ['registration'] });
});
afterAll(async () => { await t?.close(); });

const put = (path: string, body: unknown = {}, token = t.token) => t.request('PUT', `${R}${path}`, { token, body });
const post = (path: string, body: unknown = {}, token = t.token) => t.request('POST', `${R}${path}`, { token, body });
const get = (path: string, token = t.token) => t.request('GET', `${R}${path}`, { token });

describe('users', () => {
  it('creates a user with a generated id or the given one; a duplicate is 409', async () => {
    const generated = await post('/users', {});
    expect(generated.status).toBe(201);
    expect(generated.body).toEqual({ userId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const given = await post('/users', { userId: 'u-1' });
    expect(given.status).toBe(201);
    expect(given.body).toEqual({ userId: 'u-1' });
    expect((await post('/users', { userId: 'u-1' })).status).toBe(409);
    expect((await post('/users', { userId: 12 })).status).toBe(400);
    expect((await post('/users', { userId: ' ' })).status).toBe(400);
    const read = await get('/users/u-1');
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ userId: 'u-1', status: 'Active', active: true, deviceIds: [], products: [] });
    expect((await get('/users/nobody')).status).toBe(404);
  });

  it('PUT sets the activation, PATCH changes only what is sent; a deactivated user takes no new device (409)', async () => {
    await post('/users', { userId: 'act' });
    const off = await put('/users/act/activation', { status: 'inactive', reason: 'contract ended', effectiveDate: '2026-01-15' });
    expect(off.status).toBe(200);
    expect(off.body).toMatchObject({ status: 'Inactive', active: false, activationReason: 'contract ended', activationEffectiveDate: '2026-01-15' });
    const refused = await put('/devices/act-phone/users/act');
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/deactivated/);
    expect((await get('/devices/act-phone')).status).toBe(404);
    const patched = await t.request('PATCH', `${R}/users/act/activation`, { token: t.token, body: { reason: 'still ended' } });
    expect(patched.body).toMatchObject({ status: 'Inactive', activationReason: 'still ended', activationEffectiveDate: '2026-01-15' });
    const on = await t.request('PATCH', `${R}/users/act/activation`, { token: t.token, body: { active: true } });
    expect(on.body).toMatchObject({ status: 'Active', active: true, activationReason: 'still ended' });
    const replaced = await put('/users/act/activation', { active: true });
    expect(replaced.body).toMatchObject({ status: 'Active', activationReason: null });
    expect((await put('/devices/act-phone/users/act')).status).toBe(200);
    for (const body of [{}, { status: 'paused' }, { active: 'yes' }, { status: 'Active', active: false }, { status: 'Active', effectiveDate: '2026-02-30' }]) {
      const res = await put('/users/act/activation', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    expect((await t.request('PATCH', `${R}/users/act/activation`, { token: t.token, body: { effectiveDate: 'tomorrow' } })).status).toBe(400);
    expect((await put('/users/ghost/activation', { status: 'Active' })).status).toBe(404);
  });
});

describe('devices', () => {
  it('assigns, reads by id, by user and the user by device', async () => {
    await post('/users', { userId: 'd-user' });
    const assigned = await put('/devices/imei-1/users/d-user', { effectiveDate: '2026-01-01' });
    expect(assigned.status).toBe(200);
    expect(assigned.body).toMatchObject({ deviceId: 'imei-1', type: 'mobile', status: 'Active', userId: 'd-user', effectiveDate: '2026-01-01', effectiveEndDate: null });
    expect(assigned.body.history).toHaveLength(1);
    const again = await put('/devices/imei-1/users/d-user', { effectiveDate: '2026-02-01' });
    expect(again.body.history).toHaveLength(1);
    const byUser = await get('/devices/users/d-user');
    expect(byUser.body.devices.map((d: { deviceId: string }) => d.deviceId)).toEqual(['imei-1']);
    const user = await get('/users/devices/imei-1');
    expect(user.status).toBe(200);
    expect(user.body).toMatchObject({ userId: 'd-user', deviceIds: ['imei-1'] });
    expect((await get('/users/devices/unknown-device')).status).toBe(404);
    expect((await get('/devices/users/nobody')).status).toBe(404);
    expect((await put('/devices/imei-x/users/nobody')).status).toBe(404);
    expect((await put('/devices/imei-1/users/d-user', { effectiveDate: '2026-13-01' })).status).toBe(400);
    expect((await put('/devices/imei-1/users/d-user', { type: 'tablet' })).status).toBe(400);
  });

  it('re-associates a device to another user, keeping the history', async () => {
    await post('/users', { userId: 'from' });
    await post('/users', { userId: 'to' });
    await put('/devices/move-1/users/from', { effectiveDate: '2026-01-01' });
    expect((await put('/devices/move-1/users/to', { effectiveDate: '2025-12-01' })).status).toBe(400);
    const moved = await put('/devices/move-1/users/to', { effectiveDate: '2026-03-01' });
    expect(moved.status).toBe(200);
    expect(moved.body.userId).toBe('to');
    expect(moved.body.history).toEqual([
      expect.objectContaining({ userId: 'from', effectiveFrom: '2026-01-01', effectiveTo: '2026-03-01', endReason: 'reassociated', current: false }),
      expect.objectContaining({ userId: 'to', effectiveFrom: '2026-03-01', effectiveTo: null, endReason: null, current: true }),
    ]);
    expect((await get('/devices/users/from')).body.devices).toEqual([]);
    const withHistory = await get('/devices/users/from?includeHistory=true');
    expect(withHistory.body.devices.map((d: { deviceId: string }) => d.deviceId)).toEqual(['move-1']);
    expect((await get('/devices/users/from?includeHistory=maybe')).status).toBe(400);
  });

  it('replaces a device: the new one takes over from effectiveDate, the old one is Inactive, history kept', async () => {
    await post('/users', { userId: 'rep' });
    await put('/devices/old-phone/users/rep', { effectiveDate: '2026-01-01' });
    const res = await put('/devices/old-phone', { effectiveDate: '2026-06-01', newDeviceId: 'new-phone' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ deviceId: 'new-phone', type: 'mobile' });
    const old = await get('/devices/old-phone');
    expect(old.body).toMatchObject({ status: 'Inactive', userId: null, replacedByDeviceId: 'new-phone' });
    expect(old.body.history).toEqual([expect.objectContaining({ userId: 'rep', effectiveFrom: '2026-01-01', effectiveTo: '2026-06-01', endReason: 'replaced' })]);
    const fresh = await get('/devices/new-phone');
    expect(fresh.body).toMatchObject({ status: 'Active', userId: 'rep', effectiveDate: '2026-06-01', replacesDeviceId: 'old-phone' });
    expect((await get('/users/devices/new-phone')).body.userId).toBe('rep');
    expect((await get('/devices/users/rep')).body.devices.map((d: { deviceId: string }) => d.deviceId)).toEqual(['new-phone']);
    // the old device is Inactive: it cannot be associated again until it is set Active
    expect((await put('/devices/old-phone/users/rep')).status).toBe(409);
    const reactivated = await put('/devices/old-phone/status', { status: 'active' });
    expect(reactivated.body.status).toBe('Active');
    expect((await put('/devices/old-phone/status', { status: 'broken' })).status).toBe(400);
    // bad input
    for (const body of [{}, { newDeviceId: 'x' }, { effectiveDate: '2026-07-01' }, { newDeviceId: 'x', effectiveDate: '01/07/2026' }, { newDeviceId: 'new-phone', effectiveDate: '2026-07-01' }]) {
      expect((await put('/devices/new-phone', body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await put('/devices/new-phone', { newDeviceId: 'n2', effectiveDate: '2026-05-01' })).status).toBe(400);
    expect((await put('/devices/nope', { newDeviceId: 'n3', effectiveDate: '2026-07-01' })).status).toBe(404);
    // a device already in use cannot take over
    await post('/users', { userId: 'rep2' });
    await put('/devices/busy/users/rep2');
    expect((await put('/devices/new-phone', { newDeviceId: 'busy', effectiveDate: '2026-07-01' })).status).toBe(409);
  });

  it("replaces a user's only active device, and refuses (400) when the user has several", async () => {
    await post('/users', { userId: 'only' });
    expect((await put('/users/only/devices', { newDeviceId: 'z', effectiveDate: '2026-02-01' })).status).toBe(409);
    await put('/devices/only-a/users/only', { effectiveDate: '2026-01-01' });
    const swapped = await put('/users/only/devices', { newDeviceId: 'only-b', effectiveDate: '2026-02-01' });
    expect(swapped.status).toBe(200);
    expect(swapped.body).toMatchObject({ deviceId: 'only-b', type: 'mobile', replacesDeviceId: 'only-a', effectiveDate: '2026-02-01' });
    await put('/devices/only-c/users/only', { effectiveDate: '2026-03-01' });
    const several = await put('/users/only/devices', { newDeviceId: 'only-d', effectiveDate: '2026-04-01' });
    expect(several.status).toBe(400);
    expect(several.body.detail).toMatch(/2 active devices/);
    expect(several.body.activeDevices).toEqual(['only-b', 'only-c']);
    expect((await get('/devices/only-d')).status).toBe(404);
    expect((await put('/users/only/devices', { newDeviceId: 'only-d' })).status).toBe(400);
    expect((await put('/users/ghost/devices', { newDeviceId: 'only-d', effectiveDate: '2026-04-01' })).status).toBe(404);
  });

  it('ends an association with an effective end date; the device is free again from that day', async () => {
    await post('/users', { userId: 'end' });
    await post('/users', { userId: 'next' });
    await put('/devices/end-1/users/end', { effectiveDate: '2026-01-01' });
    expect((await put('/users/end/devices/end-1', { effectiveEndDate: '2025-12-31' })).status).toBe(400);
    expect((await put('/users/end/devices/end-1', {})).status).toBe(400);
    expect((await put('/users/next/devices/end-1', { effectiveEndDate: '2027-01-01' })).status).toBe(404);
    const ended = await put('/users/end/devices/end-1', { effectiveEndDate: '2099-01-01' });
    expect(ended.status).toBe(200);
    expect(ended.body).toMatchObject({ deviceId: 'end-1', userId: 'end', effectiveFrom: '2026-01-01', effectiveTo: '2099-01-01', endReason: 'ended', current: true });
    // still current until 2099: another user cannot take it earlier
    expect((await put('/devices/end-1/users/next', { effectiveDate: '2098-01-01' })).status).toBe(409);
    expect((await put('/users/end/devices/end-1', { effectiveEndDate: '2099-02-01' })).status).toBe(404);
    const later = await put('/devices/end-1/users/next', { effectiveDate: '2099-01-01' });
    expect(later.status).toBe(200);
    expect(later.body.history).toHaveLength(2);
  });

  it('keeps one open association per device in the database, even under concurrent assignment', async () => {
    await post('/users', { userId: 'race-a' });
    await post('/users', { userId: 'race-b' });
    const results = await Promise.all([put('/devices/race-dev/users/race-a'), put('/devices/race-dev/users/race-b'), put('/devices/race-dev/users/race-a')]);
    for (const r of results) expect([200, 409]).toContain(r.status);
    const device = await get('/devices/race-dev');
    expect(device.body.history.filter((a: { effectiveTo: string | null }) => a.effectiveTo === null)).toHaveLength(1);
  });
});

describe('vehicles', () => {
  it('creates, reads, updates a vehicle and associates devices', async () => {
    await post('/users', { userId: 'v-user' });
    const created = await post('/vehicles', { vehicleId: 'veh-1', vin: '1hgcm82633a004352', make: 'Honda', year: 2021 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ vehicleId: 'veh-1', vin: '1HGCM82633A004352', make: 'Honda', model: null, year: 2021, devices: [], products: [] });
    expect((await post('/vehicles', { vehicleId: 'veh-1' })).status).toBe(409);
    const generated = await post('/vehicles', {});
    expect(generated.body.vehicleId).toMatch(/^[0-9a-f-]{36}$/);
    for (const body of [{ vin: 'SHORT' }, { year: 1700 }, { year: '2020' }, { make: 5 }, { userId: 'ghost' }]) {
      const res = await post('/vehicles', body);
      expect(res.status, JSON.stringify(body)).toBe(body.userId ? 404 : 400);
    }
    const updated = await put('/vehicle/veh-1', { model: 'Accord', userId: 'v-user' });
    expect(updated.body).toMatchObject({ make: 'Honda', model: 'Accord', userId: 'v-user' });
    expect((await put('/vehicle/veh-1', { vehicleId: 'other' })).status).toBe(400);
    expect((await put('/vehicle/nope', { make: 'X' })).status).toBe(404);
    const linked = await put('/devices/obd-1/vehicle/veh-1', { type: 'obd', effectiveDate: '2026-01-01' });
    expect(linked.body).toMatchObject({ deviceId: 'obd-1', type: 'obd', vehicleId: 'veh-1', userId: null });
    const withUser = await put('/devices/obd-1/users/v-user', { effectiveDate: '2026-02-01' });
    expect(withUser.body).toMatchObject({ vehicleId: 'veh-1', userId: 'v-user' });
    expect((await put('/devices/obd-1/vehicle/nope')).status).toBe(404);
    const read = await get('/vehicle/veh-1');
    expect(read.body.devices).toEqual([{ deviceId: 'obd-1', type: 'obd', status: 'Active' }]);
    expect((await get('/vehicle/nope')).status).toBe(404);
  });

  it('creates a vehicle with devices, all or nothing', async () => {
    await post('/users', { userId: 'vd-user' });
    const res = await post('/vehicles/devices', { vehicleId: 'veh-2', userId: 'vd-user', devices: [{ deviceId: 'vd-1', type: 'obd' }, 'vd-2'], effectiveDate: '2026-03-01' });
    expect(res.status).toBe(201);
    expect(res.body.devices.map((d: { deviceId: string }) => d.deviceId).sort()).toEqual(['vd-1', 'vd-2']);
    expect((await get('/devices/vd-2')).body).toMatchObject({ vehicleId: 'veh-2', userId: 'vd-user', effectiveDate: '2026-03-01', type: 'mobile' });
    const clash = await post('/vehicles/devices', { vehicleId: 'veh-3', devices: ['vd-new', 'vd-1'] });
    expect(clash.status).toBe(409);
    expect((await get('/vehicle/veh-3')).status).toBe(404);
    expect((await get('/devices/vd-new')).status).toBe(404);
    for (const body of [{ vehicleId: 'veh-4' }, { vehicleId: 'veh-4', devices: [] }, { vehicleId: 'veh-4', devices: ['a', 'a'] }, { vehicleId: 'veh-4', devices: [{ type: 'obd' }] }, { vehicleId: 'veh-4', devices: ['a'], effectiveDate: '2026-02-31' }]) {
      expect((await post('/vehicles/devices', body)).status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe('devices through GraphQL', () => {
  it('replaces a device and reads its history and the federated links', async () => {
    await t.graphql('mutation { registerUser(input: { userId: "gq-dev" }) { userId } }');
    const assigned = await t.graphql('mutation { assignRegisteredDevice(deviceId: "gq-a", userId: "gq-dev", input: { effectiveDate: "2026-01-01", type: OBD }) { deviceId type status user { userId } } }');
    expect(assigned.data.assignRegisteredDevice).toEqual({ deviceId: 'gq-a', type: 'OBD', status: 'ACTIVE', user: { userId: 'gq-dev' } });
    const replaced = await t.graphql('mutation { replaceRegisteredDevice(deviceId: "gq-a", input: { newDeviceId: "gq-b", effectiveDate: "2026-05-01" }) { deviceId type replacesDeviceId history { userId effectiveFrom effectiveTo } } }');
    expect(replaced.data.replaceRegisteredDevice).toEqual({ deviceId: 'gq-b', type: 'OBD', replacesDeviceId: 'gq-a', history: [{ userId: 'gq-dev', effectiveFrom: '2026-05-01', effectiveTo: null }] });
    const user = await t.graphql('{ registeredUser(userId: "gq-dev") { devices { deviceId } all: devices(includeEnded: true) { deviceId } deviceAssociations { deviceId endReason current } } }');
    expect(user.data.registeredUser).toEqual({
      devices: [{ deviceId: 'gq-b' }], all: [{ deviceId: 'gq-a' }, { deviceId: 'gq-b' }],
      deviceAssociations: [{ deviceId: 'gq-a', endReason: 'REPLACED', current: false }, { deviceId: 'gq-b', endReason: null, current: true }],
    });
    const bad = await t.graphql('mutation($d: Date!) { replaceRegisteredDevice(deviceId: "gq-b", input: { newDeviceId: "gq-c", effectiveDate: $d }) { deviceId } }', { d: '2026-02-30' });
    expect(bad.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    const several = await t.graphql('mutation { assignRegisteredDevice(deviceId: "gq-c", userId: "gq-dev") { deviceId } }');
    expect(several.errors).toBeUndefined();
    const ambiguous = await t.graphql('mutation { replaceRegisteredUserDevice(userId: "gq-dev", input: { newDeviceId: "gq-d", effectiveDate: "2026-06-01" }) { deviceId } }');
    expect(ambiguous.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    const off = await t.graphql('mutation { setRegisteredUserActivation(userId: "gq-dev", input: { status: INACTIVE }) { status active } }');
    expect(off.data.setRegisteredUserActivation).toEqual({ status: 'INACTIVE', active: false });
    const refused = await t.graphql('mutation { assignRegisteredDevice(deviceId: "gq-e", userId: "gq-dev") { deviceId } }');
    expect(refused.errors?.[0].extensions?.code).toBe('CONFLICT');
  });
});

describe('REST table', () => {
  it('documents all 23 registration paths in the OpenAPI document', async () => {
    const res = await t.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    const operations = Object.entries(res.body.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => path.startsWith(R))
      .flatMap(([path, methods]) => Object.keys(methods).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m)).map((m) => `${m.toUpperCase()} ${path}`));
    expect(operations).toHaveLength(23);
    expect(operations).toContain(`PUT ${R}/devices/{deviceId}`);
    expect(operations).toContain(`DELETE ${R}/users/{userId}/products/{productName}`);
  });
});

describe('input validation on every path', () => {
  it('answers malformed bodies and odd path parameters with 4xx, never 5xx', async () => {
    await post('/users', { userId: 'fuzz' });
    await put('/devices/fuzz-dev/users/fuzz');
    await post('/vehicles', { vehicleId: 'fuzz-car' });
    const params = [
      { userId: 'fuzz', deviceId: 'fuzz-dev', vehicleId: 'fuzz-car', productName: 'Driving%20Behavior' },
      { userId: '%00', deviceId: 'a%00b', vehicleId: '%00', productName: '%00' },
      { userId: 'u'.repeat(300), deviceId: 'd'.repeat(300), vehicleId: 'v'.repeat(300), productName: 'p'.repeat(300) },
      { userId: '%20', deviceId: '%20', vehicleId: '%20', productName: '%20' },
    ];
    const junk = {
      userId: {}, products: { a: 1 }, effectiveDate: 5, effectiveEndDate: [], newDeviceId: [], status: 1, active: 'x', type: {}, version: 3,
      granted: 'no', source: [], timestamp: 12, devices: 'x', year: 'old', vin: 7, additionalParameters: 'x', reason: {},
    };
    const bodies: unknown[] = ['[1,2]', '"text"', '{"a":', {}, junk, { effectiveDate: '2026-02-29', effectiveEndDate: '0000-00-00', newDeviceId: '', status: '' }];
    const failures: string[] = [];
    for (const route of registrationRoutes) {
      for (const p of params) {
        const path = route.path.replace(/:(\w+)/g, (_, name: string) => p[name as keyof typeof p]);
        for (const body of route.method === 'GET' || route.method === 'DELETE' ? [undefined] : bodies) {
          const res = await t.request(route.method, path, { token: t.token, body });
          if (res.status >= 500) failures.push(`${route.method} ${path.slice(0, 80)} ${JSON.stringify(body)} -> ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);
});

describe('query cost', () => {
  it('reading a user\'s devices costs the same number of statements for 2 or 6 devices (loaders, no N+1)', async () => {
    const db = t.stack.subgraphs.find((s) => s.name === 'registration')!.db;
    const cost = async (userId: string, n: number) => {
      await post('/users', { userId });
      for (let i = 0; i < n; i += 1) await put(`/devices/${userId}-${i}/users/${userId}`, { effectiveDate: '2026-01-01' });
      db.statements.reset();
      const res = await get(`/devices/users/${userId}`);
      expect(res.body.devices).toHaveLength(n);
      const listing = db.statements.count;
      db.statements.reset();
      const user = await t.graphql(`{ registeredUser(userId: "${userId}") { devices { deviceId user { userId } currentAssociation { current } history { effectiveFrom } } products { productName } consents { current { type } } } }`);
      expect(user.data.registeredUser.devices).toHaveLength(n);
      return [listing, db.statements.count];
    };
    const small = await cost('cost-2', 2);
    const large = await cost('cost-6', 6);
    expect(large).toEqual(small);
  });
});

describe('OpenAPI contract', () => {
  it('every registration response of this file matches its documented status and schema', async () => {
    expect(t.contract.checked).toBeGreaterThan(50);
    expect(t.contract.violations).toEqual([]);
  });
});
