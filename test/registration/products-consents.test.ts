import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack } from '../support/shared-stack.ts';
import type { TestStack } from '../support/stack.ts';
import { Consent } from '../../subgraphs/registration/entities.ts';
import { TENANT_FILTER } from '../../subgraphs/platform/db/tenant.ts';

const R = '/registration/v2';
let t: TestStack;

beforeAll(async () => {
  t = await sharedTestStack({ subgraphs: ['registration'] });
});
afterAll(async () => { await t?.close(); });

const put = (path: string, body: unknown = {}, token = t.token) => t.request('PUT', `${R}${path}`, { token, body });
const post = (path: string, body: unknown = {}, token = t.token) => t.request('POST', `${R}${path}`, { token, body });
const get = (path: string, token = t.token) => t.request('GET', `${R}${path}`, { token });
const del = (path: string, token = t.token) => t.request('DELETE', `${R}${path}`, { token });

const grant = (userId: string, type: string, extra: Record<string, unknown> = {}, token = t.token) =>
  post('/consents', { userId, type, version: '1.0', granted: true, source: 'mobile-app', ...extra }, token);

describe('consents', () => {
  it('records grants and withdrawals append-only; GET returns the current state per type and the full history', async () => {
    await post('/users', { userId: 'c-1' });
    const first = await grant('c-1', 'location-tracking', { timestamp: '2026-01-01T10:00:00Z' });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ userId: 'c-1', type: 'location-tracking', version: '1.0', action: 'granted', granted: true, timestamp: '2026-01-01T10:00:00.000Z', source: 'mobile-app' });
    await post('/consents', { userId: 'c-1', type: 'location-tracking', version: '1.1', action: 'withdrawn', timestamp: '2026-02-01T10:00:00Z', source: 'web' });
    await grant('c-1', 'MARKETING', { timestamp: '2026-01-15T10:00:00Z' });
    // recorded late, but happened earliest: history is in time order and the current state is the latest in time
    await grant('c-1', 'location-tracking', { version: '0.9', timestamp: '2025-12-01T10:00:00Z' });
    const state = await get('/consents/c-1');
    expect(state.status).toBe(200);
    expect(state.body.consents.map((c: { type: string; action: string; version: string }) => [c.type, c.action, c.version])).toEqual([
      ['location-tracking', 'withdrawn', '1.1'], ['marketing', 'granted', '1.0'],
    ]);
    expect(state.body.history.map((c: { timestamp: string }) => c.timestamp)).toEqual([
      '2025-12-01T10:00:00.000Z', '2026-01-01T10:00:00.000Z', '2026-01-15T10:00:00.000Z', '2026-02-01T10:00:00.000Z',
    ]);
    expect((await get('/consents/nobody')).status).toBe(404);
  });

  it('validates consents (400) and refuses an unknown user (404)', async () => {
    await post('/users', { userId: 'c-2' });
    const future = new Date(Date.now() + 3_600_000).toISOString();
    for (const body of [
      {}, { userId: 'c-2', type: 'telepathy', version: '1', granted: true, source: 'web' }, { userId: 'c-2', type: 'marketing', granted: true, source: 'web' },
      { userId: 'c-2', type: 'marketing', version: '1', source: 'web' }, { userId: 'c-2', type: 'marketing', version: '1', granted: 'yes', source: 'web' },
      { userId: 'c-2', type: 'marketing', version: '1', action: 'maybe', source: 'web' }, { userId: 'c-2', type: 'marketing', version: '1', granted: true },
      { userId: 'c-2', type: 'marketing', version: '1', granted: true, source: 'web', timestamp: 'yesterday' },
      { userId: 'c-2', type: 'marketing', version: '1', granted: true, source: 'web', timestamp: future },
      { userId: 'c-2', type: 'marketing', version: '1', granted: true, action: 'withdrawn', source: 'web' },
      { userId: 'c-2', type: 5, version: '1', granted: true, source: 'web' },
    ]) {
      const res = await post('/consents', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('BAD_USER_INPUT');
    }
    expect((await grant('ghost', 'marketing')).status).toBe(404);
    expect((await get('/consents/c-2')).body.history).toEqual([]);
  });

  it('the database refuses to change or delete a consent record', async () => {
    await post('/users', { userId: 'c-3' });
    await grant('c-3', 'marketing');
    const subgraph = t.stack.subgraphs.find((s) => s.name === 'registration')!;
    const em = subgraph.db.orm.em.fork();
    em.setFilterParams(TENANT_FILTER, { orgId: t.org });
    const [row] = await em.find(Consent, { userId: 'c-3' });
    row!.version = 'tampered';
    await expect(em.flush()).rejects.toThrow(/append-only/);
    const fresh = subgraph.db.orm.em.fork();
    fresh.setFilterParams(TENANT_FILTER, { orgId: t.org });
    await expect(fresh.nativeDelete(Consent, { userId: 'c-3' })).rejects.toThrow(/append-only/);
    expect((await get('/consents/c-3')).body.history).toHaveLength(1);
  });
});

describe('product registrations', () => {
  it('a product needing consents is refused (409, naming them) until they are currently granted', async () => {
    await post('/users', { userId: 'p-1' });
    const none = await post('/users/p-1/products/Driving%20Behavior');
    expect(none.status).toBe(409);
    expect(none.body.detail).toMatch(/location-tracking, driving-data-sharing/);
    expect(none.body.missingConsents).toEqual(['location-tracking', 'driving-data-sharing']);
    await grant('p-1', 'location-tracking');
    const one = await post('/users/p-1/products/Driving%20Behavior');
    expect(one.status).toBe(409);
    expect(one.body.missingConsents).toEqual(['driving-data-sharing']);
    await grant('p-1', 'driving-data-sharing', { timestamp: '2026-01-01T00:00:00Z' });
    await post('/consents', { userId: 'p-1', type: 'driving-data-sharing', version: '1.0', granted: false, source: 'web', timestamp: '2026-02-01T00:00:00Z' });
    expect((await post('/users/p-1/products/Driving%20Behavior')).body.missingConsents).toEqual(['driving-data-sharing']);
    await grant('p-1', 'driving-data-sharing');
    const ok = await post('/users/p-1/products/driving-behavior', { additionalParameters: { programCode: 'F7' } });
    expect(ok.status).toBe(204);
    expect(ok.body).toBe('');
    const user = await get('/users/p-1');
    expect(user.body.products).toEqual([expect.objectContaining({ productName: 'Driving Behavior', status: 'enrolled', unenrolledAt: null })]);
    expect((await post('/users/p-1/products/Driving%20Behavior')).status).toBe(204);
  });

  it('un-enrols (204) and refuses to register the product again (409); unknown products are 400', async () => {
    await post('/users', { userId: 'p-2' });
    expect((await post('/users/p-2/products/Roadside%20Assistance')).status).toBe(204);
    expect((await del('/users/p-2/products/Roadside%20Assistance')).status).toBe(204);
    expect((await del('/users/p-2/products/Roadside%20Assistance')).status).toBe(204);
    const again = await post('/users/p-2/products/Roadside%20Assistance');
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/un-enrol/);
    const bulk = await post('/users/products', { userId: 'p-2', products: ['Roadside Assistance'] });
    expect(bulk.status).toBe(409);
    const user = await get('/users/p-2');
    expect(user.body.products).toEqual([expect.objectContaining({ productName: 'Roadside Assistance', status: 'unenrolled', unenrolledAt: expect.any(String) })]);
    const unknown = await post('/users/p-2/products/Teleportation');
    expect(unknown.status).toBe(400);
    expect(unknown.body.detail).toMatch(/Driving Behavior/);
    expect((await del('/users/p-2/products/Teleportation')).status).toBe(400);
    expect((await del('/users/p-2/products/Crash%20Detection')).status).toBe(404);
    expect((await post('/users/ghost/products/Roadside%20Assistance')).status).toBe(404);
    expect((await post('/users/p-2/products/Vehicle%20Health')).status).toBe(400);
  });

  it('POST /users/products registers several products, all or nothing', async () => {
    await post('/users', { userId: 'p-3' });
    await grant('p-3', 'location-tracking');
    const partial = await post('/users/products', { userId: 'p-3', products: ['Crash Detection', 'Driving Behavior'], additionalParameters: { a: 1 } });
    expect(partial.status).toBe(409);
    expect(partial.body.missingConsents).toEqual(['driving-data-sharing']);
    expect((await get('/users/p-3')).body.products).toEqual([]);
    const ok = await post('/users/products', { userId: 'p-3', products: ['Crash Detection', 'Roadside Assistance', 'crash detection'], additionalParameters: { a: 1 } });
    expect(ok.status).toBe(201);
    expect(ok.body.products.map((p: { productName: string }) => p.productName)).toEqual(['Crash Detection', 'Roadside Assistance']);
    expect(ok.body.products[0]).toMatchObject({ status: 'enrolled', additionalParameters: { a: 1 }, userId: 'p-3' });
    for (const body of [{}, { userId: 'p-3' }, { userId: 'p-3', products: [] }, { userId: 'p-3', products: 'Driving Behavior' }, { userId: 'p-3', products: [1] },
      { userId: 'p-3', products: ['Nope'] }, { userId: 'p-3', products: ['Roadside Assistance'], additionalParameters: [1] }]) {
      expect((await post('/users/products', body)).status, JSON.stringify(body)).toBe(400);
    }
  });

  it('a deactivated user cannot take new products (409) but can leave one', async () => {
    await post('/users', { userId: 'p-4' });
    await post('/users/p-4/products/Roadside%20Assistance');
    await put('/users/p-4/activation', { status: 'Inactive' });
    const refused = await post('/users/products', { userId: 'p-4', products: ['Crash Detection'] });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/deactivated/);
    expect((await del('/users/p-4/products/Roadside%20Assistance')).status).toBe(204);
  });

  it('registers a product for a vehicle, gated by the consents of its user', async () => {
    await post('/users', { userId: 'pv' });
    await post('/vehicles', { vehicleId: 'pv-car' });
    const noUser = await put('/product/Vehicle%20Health/vehicle/pv-car/register');
    expect(noUser.status).toBe(409);
    expect(noUser.body.detail).toMatch(/vehicle-data-collection/);
    await put('/vehicle/pv-car', { userId: 'pv' });
    expect((await put('/product/Vehicle%20Health/vehicle/pv-car/register')).status).toBe(409);
    await grant('pv', 'vehicle-data-collection');
    const ok = await put('/product/Vehicle%20Health/vehicle/pv-car/register', { additionalParameters: { plan: 'basic' } });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ productName: 'Vehicle Health', vehicleId: 'pv-car', userId: null, status: 'enrolled', additionalParameters: { plan: 'basic' } });
    expect((await get('/vehicle/pv-car')).body.products).toEqual([expect.objectContaining({ productName: 'Vehicle Health' })]);
    expect((await put('/product/Nope/vehicle/pv-car/register')).status).toBe(400);
    expect((await put('/product/Vehicle%20Health/vehicle/nope/register')).status).toBe(404);
  });
});

describe('products and consents through GraphQL', () => {
  it('lists products, records consents, registers, un-enrols and refuses re-registration', async () => {
    const products = await t.graphql('{ registrationProducts { name requiredConsents } }');
    expect(products.data.registrationProducts).toContainEqual({ name: 'Driving Behavior', requiredConsents: ['location-tracking', 'driving-data-sharing'] });
    await t.graphql('mutation { registerUser(input: { userId: "gq-p" }) { userId } }');
    const refused = await t.graphql('mutation { registerUserProduct(userId: "gq-p", productName: "Crash Detection") { status } }');
    expect(refused.errors?.[0].extensions).toMatchObject({ code: 'CONFLICT', missingConsents: ['location-tracking'] });
    const consent = await t.graphql('mutation($i: RecordConsentInput!) { recordConsent(input: $i) { type action granted version } }',
      { i: { userId: 'gq-p', type: 'location-tracking', version: '3', action: 'GRANTED', source: 'web' } });
    expect(consent.data.recordConsent).toEqual({ type: 'location-tracking', action: 'GRANTED', granted: true, version: '3' });
    const registered = await t.graphql('mutation { registerUserProduct(userId: "gq-p", productName: "Crash Detection", additionalParameters: { tier: "gold" }) { productName status additionalParameters } }');
    expect(registered.data.registerUserProduct).toEqual({ productName: 'Crash Detection', status: 'ENROLLED', additionalParameters: { tier: 'gold' } });
    const left = await t.graphql('mutation { unenrollUserProduct(userId: "gq-p", productName: "Crash Detection") { status unenrolledAt } }');
    expect(left.data.unenrollUserProduct.status).toBe('UNENROLLED');
    const again = await t.graphql('mutation { registerUserProducts(userId: "gq-p", products: ["Crash Detection"]) { status } }');
    expect(again.errors?.[0].extensions?.code).toBe('CONFLICT');
    const unknown = await t.graphql('mutation { registerUserProduct(userId: "gq-p", productName: "Nope") { status } }');
    expect(unknown.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    const user = await t.graphql('{ registeredUser(userId: "gq-p") { products { productName status } consents { current { type granted } history { type } } } }');
    expect(user.data.registeredUser).toEqual({
      products: [{ productName: 'Crash Detection', status: 'UNENROLLED' }],
      consents: { current: [{ type: 'location-tracking', granted: true }], history: [{ type: 'location-tracking' }] },
    });
  });
});

describe('organisation isolation', () => {
  it('another organisation can neither see nor change the first one\'s users, devices, vehicles, products or consents', async () => {
    await post('/users', { userId: 'iso' });
    await put('/devices/iso-dev/users/iso', { effectiveDate: '2026-01-01' });
    await post('/vehicles', { vehicleId: 'iso-car', userId: 'iso' });
    await grant('iso', 'location-tracking');
    await post('/users/iso/products/Roadside%20Assistance');
    const b = (await t.clientFor('org-b')).token;
    expect((await get('/users/iso', b)).status).toBe(404);
    expect((await get('/users/devices/iso-dev', b)).status).toBe(404);
    expect((await get('/devices/iso-dev', b)).status).toBe(404);
    expect((await get('/devices/users/iso', b)).status).toBe(404);
    expect((await get('/vehicle/iso-car', b)).status).toBe(404);
    expect((await get('/consents/iso', b)).status).toBe(404);
    expect((await put('/users/iso/activation', { status: 'Inactive' }, b)).status).toBe(404);
    expect((await put('/devices/iso-dev/status', { status: 'Inactive' }, b)).status).toBe(404);
    expect((await put('/devices/iso-dev', { newDeviceId: 'b-dev', effectiveDate: '2026-02-01' }, b)).status).toBe(404);
    expect((await put('/users/iso/devices/iso-dev', { effectiveEndDate: '2026-02-01' }, b)).status).toBe(404);
    expect((await put('/vehicle/iso-car', { make: 'X' }, b)).status).toBe(404);
    expect((await del('/users/iso/products/Roadside%20Assistance', b)).status).toBe(404);
    expect((await grant('iso', 'marketing', {}, b)).status).toBe(404);
    expect((await put('/product/Roadside%20Assistance/vehicle/iso-car/register', {}, b)).status).toBe(404);
    const gql = await t.graphql('{ registeredUser(userId: "iso") { userId } registeredDevice(deviceId: "iso-dev") { deviceId } registeredVehicle(vehicleId: "iso-car") { vehicleId } }', {}, b);
    expect(gql.data).toEqual({ registeredUser: null, registeredDevice: null, registeredVehicle: null });
    // org-b may use the same ids for its own rows, including the same device id
    expect((await post('/users', { userId: 'iso' }, b)).status).toBe(201);
    const own = await put('/devices/iso-dev/users/iso', { effectiveDate: '2026-05-01' }, b);
    expect(own.status).toBe(200);
    expect(own.body.history).toHaveLength(1);
    // the first organisation's data is untouched
    const mine = await get('/devices/iso-dev');
    expect(mine.body).toMatchObject({ status: 'Active', userId: 'iso', effectiveDate: '2026-01-01' });
    expect(mine.body.history).toHaveLength(1);
    expect((await get('/users/iso')).body).toMatchObject({ status: 'Active', products: [expect.objectContaining({ status: 'enrolled' })] });
    expect((await get('/consents/iso')).body.history).toHaveLength(1);
  });

  it('needs a b2b token', async () => {
    expect((await get('/users/iso', null as unknown as string)).status).toBe(401);
    const roadside = await t.clientFor('org-a', ['roadside']);
    expect((await get('/users/iso', roadside.token)).status).toBe(403);
  });
});

describe('OpenAPI contract', () => {
  it('every registration response of this file matches its documented status and schema', async () => {
    expect(t.contract.checked).toBeGreaterThan(50);
    expect(t.contract.violations).toEqual([]);
  });
});
