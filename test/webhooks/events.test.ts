import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { sourceAFull } from '../scoring/mvr-fixtures.ts';
import { expectDocumentedPayloads } from './payload-schema.ts';
import { startReceiver, waitFor, type Received } from './receiver.ts';

const WH = '/platform/webhooks/v1';
const SMI = '/shared-mobility-insights/v2';
const REG = '/registration/v2';
const VIN = '1HGCM82633A004352';
const DOB = '1969-07-21';

let t: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let secret: string;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['booking', 'scoring', 'registration', 'webhooks'], env: { WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_INTERVAL_MS: '50' } });
  receiver = await startReceiver();
  const sub = await t.request('POST', `${WH}/subscriptions`, {
    token: t.token, body: { url: `${receiver.url}/all`, eventTypes: ['booking.started', 'booking.ended', 'device.status_changed', 'consent.changed', 'mvr.created'] },
  });
  expect(sub.status).toBe(201);
  secret = sub.body.secret;
}, 300_000);
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

async function ok(method: string, path: string, body?: unknown) {
  const res = await t.request(method, path, { token: t.token, body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

const event = (type: string, match: (r: Received) => boolean = () => true) =>
  waitFor(() => receiver.received.find((r) => r.json.type === type && match(r)), 5_000, type);

it('booking.started and booking.ended carry the booking as GET /bookings/{id} returns it', async () => {
  await ok('POST', `${SMI}/vehicles`, { VIN, deviceID: '356938035643809' });
  const started = await ok('POST', `${SMI}/bookings`, { VIN, userID: 'driver-1', startTimestamp: 1_800_000_000 });
  const hit = await event('booking.started');
  expect(receiver.verify(secret, hit)).toBeTruthy();
  expect(hit.json.data.path).toBe(`${SMI}/bookings/${started.bookingID}`);
  expect(hit.json.data.resource).toEqual(await ok('GET', `${SMI}/bookings/${started.bookingID}`));
  await ok('PUT', `${SMI}/bookings/${started.bookingID}`, { actualEndTimestamp: 1_800_003_600 });
  const ended = await event('booking.ended');
  expect(ended.json.data.resource).toEqual(await ok('GET', `${SMI}/bookings/${started.bookingID}`));
  expect(ended.json.data.resource.status).toBe('ended');
});

it('device.status_changed and consent.changed come from registration', async () => {
  await ok('POST', `${REG}/users`, { userId: 'reg-1' });
  await ok('PUT', `${REG}/devices/dev-1/users/reg-1`, { effectiveDate: '2026-01-01', type: 'mobile' });
  await ok('PUT', `${REG}/devices/dev-1/status`, { status: 'Inactive' });
  const device = await event('device.status_changed');
  expect(device.json.data).toMatchObject({ path: `${REG}/devices/dev-1`, resource: { deviceId: 'dev-1', status: 'Inactive', previousStatus: 'Active' } });
  await ok('POST', `${REG}/consents`, { userId: 'reg-1', type: 'location-tracking', version: '1', granted: true, timestamp: '2026-01-01T00:00:00Z', source: 'app' });
  const consent = await event('consent.changed');
  const listed = await ok('GET', `${REG}/consents/reg-1`);
  expect(JSON.stringify(listed)).toContain(consent.json.data.resource.consentId);
  expect(consent.json.data.resource).toMatchObject({ userId: 'reg-1', type: 'location-tracking', granted: true, action: 'granted' });
});

it('mvr.created names the user and the record, never the report or a date of birth', async () => {
  await ok('POST', `${SMI}/users`, { userId: 'mvr-user', dateOfBirth: DOB, homeZip: '60601' });
  const report = sourceAFull();
  const created = await t.request('POST', `${SMI}/users/mvr-user/sourcea-mvr`, { token: t.token, body: JSON.stringify(report), headers: { 'content-type': 'application/json' } });
  expect(created.status).toBe(201);
  const hit = await event('mvr.created');
  expect(hit.json.data.resource).toEqual({ mvrId: created.body.mvrId, userId: 'mvr-user', source: 'sourcea', createdAt: expect.any(String) });
  expect(hit.body).not.toContain(DOB);
  for (const value of [report.license_number, report.full_name]) expect(hit.body).not.toContain(value);
});

it('every delivery keeps to the OpenAPI document\'s webhooks schema of its type (Ajv, JSON Schema 2020-12)', async () => {
  await expectDocumentedPayloads(t, receiver.received, ['booking.started', 'booking.ended', 'device.status_changed', 'consent.changed', 'mvr.created']);
});
