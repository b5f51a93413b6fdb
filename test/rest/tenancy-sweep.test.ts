import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildClientSchema, getIntrospectionQuery, getNamedType, isEnumType, isInputObjectType, isListType, isNonNullType, isScalarType, parse,
  type GraphQLInputType, type GraphQLSchema,
} from 'graphql';
import { restRoutes } from '../../gateway/rest/index.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { snapshotRows } from '../support/rows.ts';
import { dispatch, provision, session } from '../roadside/helpers.ts';
import { startReceiver, waitFor } from '../webhooks/receiver.ts';

/**
 * Organisation A creates data in every area; organisation B then calls every REST route of the
 * table (and every GraphQL query that takes an id) with A's identifiers. Nothing of A's may be
 * returned, and A's rows must be exactly as they were.
 */
const MARKER_DOB = '1971-03-14';
const MARKER_NAME = 'Zelda-Tenant-A';
const SMI = '/shared-mobility-insights/v2';
const REG = '/registration/v2';
const RS = '/services/roadside/v1';
const VIN = '2T1BURHE0JC014702';
const WH = '/platform/webhooks/v1';

let t: TestStack;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
// B sweeps REST, C sweeps GraphQL: each creates its own resources under A's ids only after its reads.
let b: { token: string };
let c: { token: string };
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await startTestStack({ env: { WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  const a = t.token;
  const ok = async (method: string, path: string, body?: unknown, form?: Record<string, string>) => {
    const res = await t.request(method, path, { token: a, body, form });
    if (res.status >= 300) throw new Error(`fixture ${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  // A: booking and scoring
  await ok('POST', `${SMI}/users`, { userId: 'tenant-a-user', dateOfBirth: MARKER_DOB, homeZip: '60601' });
  await ok('POST', `${SMI}/users/tenant-a-user/sourcea-mvr`, {
    id: 'mvr_ta', object: 'motor_vehicle_report', report_type: 'full', full_name: MARKER_NAME, license_number: 'TA1', license_state: 'IL',
    license_status: 'VALID', license_class: 'D', issued_date: '2020-01-01', first_issued_date: '2000-01-01', expiration_date: '2030-01-01',
    restrictions: [], endorsements: [], violations: [], accidents: [], suspensions: [],
  });
  await ok('POST', `${SMI}/vehicles`, { VIN, deviceID: '356938035643809' });
  const booking = await ok('POST', `${SMI}/bookings`, { VIN, userID: 'tenant-a-user', startTimestamp: 1_800_000_000 });
  Object.assign(ids, { 'smi:userId': 'tenant-a-user', 'smi:vin': VIN, 'smi:imei': '356938035643809', 'smi:bookingId': booking.bookingID ?? booking.bookingId });
  // A: registration
  await ok('POST', `${REG}/users`, { userId: 'tenant-a-reg' });
  await ok('POST', `${REG}/vehicles`, { vehicleId: 'tenant-a-veh', vin: VIN, make: 'Toyota', model: 'Camry', year: 2018 });
  await ok('PUT', `${REG}/devices/tenant-a-dev/users/tenant-a-reg`, { effectiveDate: '2026-01-01', type: 'mobile' });
  await ok('POST', `${REG}/consents`, { userId: 'tenant-a-reg', type: 'location-tracking', version: '1', granted: true, timestamp: '2026-01-01T00:00:00Z', source: 'app' });
  Object.assign(ids, { 'reg:userId': 'tenant-a-reg', 'reg:vehicleId': 'tenant-a-veh', 'reg:deviceId': 'tenant-a-dev', 'reg:productName': 'Driving Behavior' });
  // A: roadside
  const member = await provision(t, a, { firstName: MARKER_NAME });
  const sessionId = await session(t, a, [{ key: 'vin', value: member.vin }]);
  const rescue = await dispatch(t, a, sessionId);
  if (rescue.status >= 300) throw new Error(`fixture dispatch: ${rescue.status} ${JSON.stringify(rescue.body)}`);
  const reqId = rescue.body.requestId ?? rescue.body.reqId;
  const file = await ok('POST', `${RS}/provider/fileservice/upload`, { requestId: reqId, fileType: 'RECEIPT', fileName: 'a.txt', contentType: 'text/plain', content: Buffer.from(MARKER_NAME).toString('base64') });
  Object.assign(ids, {
    'rs:memberId': member.memberId, 'rs:assetIntegrationId': member.assetIntegrationId, 'rs:partnerCd': member.partnerCode,
    'rs:reqId': reqId, 'rs:contentid': file.contentId ?? file.contentid, 'rs:sessionId': sessionId,
  });
  // A: a webhook subscription with one delivery, settled before the sweep starts
  receiver = await startReceiver();
  const subscription = await ok('POST', `${WH}/subscriptions`, { url: `${receiver.url}/a`, eventTypes: ['rescue.status_changed'] });
  await ok('POST', `${RS}/rescue/statusUpdate`, { requestId: reqId, status: 'EN-ROUTE' });
  const delivery = await waitFor(async () => (await ok('GET', `${WH}/subscriptions/${subscription.id}/deliveries?status=succeeded`)).deliveries[0], 10_000, 'A\'s delivery');
  Object.assign(ids, { 'wh:id': subscription.id, 'wh:subscriptionId': subscription.id, 'wh:deliveryId': delivery.id });
  b = await t.clientFor('org-b');
  c = await t.clientFor('org-c');
}, 300_000);
afterAll(async () => {
  await receiver?.close();
  await t?.close();
});

const area = (path: string) => (path.startsWith(SMI) ? 'smi' : path.startsWith(REG) ? 'reg' : path.startsWith(RS) ? 'rs' : path.startsWith(WH) ? 'wh' : 'risk');

/** Replaces every id-like value in an example body with A's identifier of that name. */
function withIdsOfA(value: unknown, prefix: string): unknown {
  if (Array.isArray(value)) return value.map((v) => withIdsOfA(v, prefix));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => {
      const key = { requestId: 'reqId', userID: 'userId', VIN: 'vin', bookingID: 'bookingId', deviceID: 'imei' }[k] ?? k;
      const own = ids[`${prefix}:${key}`] ?? ids[`rs:${key}`];
      return [k, own !== undefined && typeof v !== 'object' ? own : withIdsOfA(v, prefix)];
    }));
  }
  return value;
}

const SKIP = Symbol('skip');
const ID_ALIASES: Record<string, string> = { requestId: 'reqId', userID: 'userId', VIN: 'vin', bookingID: 'bookingId', contentId: 'contentid' };
const idOfA = (prefix: string, name: string): string | undefined => ids[`${prefix}:${ID_ALIASES[name] ?? name}`];

/** A value for an argument or input field: A's id where the name is one, else a plain valid value of its type. */
function synthesize(type: GraphQLInputType, name: string, prefix: string, usedA: { value: boolean }, depth: number): unknown {
  const own = idOfA(prefix, name);
  if (own !== undefined) { usedA.value = true; return own; }
  const named = getNamedType(type);
  if (isListType(isNonNullType(type) ? type.ofType : type)) return [];
  if (isEnumType(named)) return named.getValues()[0].value;
  if (isInputObjectType(named)) {
    if (depth > 2) return SKIP;
    const entries = Object.values(named.getFields())
      .filter((f) => isNonNullType(f.type) || idOfA(prefix, f.name) !== undefined)
      .map((f) => [f.name, synthesize(f.type, f.name, prefix, usedA, depth + 1)] as const);
    return entries.some(([, v]) => v === SKIP) ? SKIP : Object.fromEntries(entries);
  }
  const scalars: Record<string, unknown> = {
    ID: 'x', String: 'x', Int: 1, Float: 1, Boolean: true, EpochSeconds: 2_000_000_000, Date: '2026-01-01', DateTime: '2026-01-01T00:00:00Z',
    VIN: VIN, ZipCode: '60601', JSON: {}, WKT: SKIP,
  };
  return named.name in scalars ? scalars[named.name] : SKIP;
}

describe('another organisation against every route', () => {
  it('gets nothing of A from any GraphQL query or mutation given A\'s ids, and changes none of A\'s rows', async () => {
    const before = await snapshotRows(t.stack, 'org-a');
    const intro = await t.graphql(getIntrospectionQuery());
    const schema: GraphQLSchema = buildClientSchema(intro.data);
    const roots = [['query', schema.getQueryType()!], ['mutation', schema.getMutationType()!]] as const;
    const counts = { query: 0, mutation: 0 };
    for (const [kind, root] of roots) {
      for (const field of Object.values(root.getFields())) {
        for (const prefix of ['smi', 'reg', 'rs', 'wh']) {
          const usedA = { value: false };
          const args = field.args.filter((arg) => isNonNullType(arg.type) || idOfA(prefix, arg.name) !== undefined);
          const values = args.map((arg) => synthesize(arg.type, arg.name, prefix, usedA, 0));
          if (!usedA.value || values.some((v) => v === SKIP)) continue;
          const named = getNamedType(field.type);
          const selection = isScalarType(named) || isEnumType(named) ? '' : '{ __typename }';
          const signature = args.map((arg, i) => `$a${i}: ${arg.type.toString()}`).join(', ');
          const call = args.map((arg, i) => `${arg.name}: $a${i}`).join(', ');
          const document = `${kind}${signature ? `(${signature})` : ''} { ${field.name}${call ? `(${call})` : ''} ${selection} }`;
          parse(document);
          const res = await t.graphql(document, Object.fromEntries(values.map((v, i) => [`a${i}`, v])), c.token);
          counts[kind] += 1;
          const text = JSON.stringify(res);
          for (const marker of [MARKER_DOB, MARKER_NAME]) expect(text.includes(marker), `${field.name} leaked ${marker}`).toBe(false);
          expect(res.errors?.some((e) => e.extensions?.code === 'INTERNAL_SERVER_ERROR'), `${field.name}: ${text.slice(0, 300)}`).not.toBe(true);
          if (kind === 'query') {
            const data = res.data?.[field.name];
            const empty = data === null || data === undefined || (Array.isArray(data) && data.length === 0);
            const denied = res.errors?.every((e) => ['NOT_FOUND', 'FORBIDDEN', 'BAD_USER_INPUT'].includes(String(e.extensions?.code)));
            expect(empty || denied, `${field.name} (${prefix}) returned ${text.slice(0, 200)}`).toBe(true);
          }
        }
      }
    }
    expect(counts.query).toBeGreaterThanOrEqual(10);
    expect(counts.mutation).toBeGreaterThanOrEqual(10);
    expect(await snapshotRows(t.stack, 'org-a')).toEqual(before);
    console.log(`tenancy sweep: ${counts.query} GraphQL queries and ${counts.mutation} mutations with A's ids as another organisation; none returned A's data, A's rows unchanged`);
  });

  it('gets nothing of A through any REST route and changes none of A\'s rows', async () => {
    const before = await snapshotRows(t.stack, 'org-a');
    expect(Object.values(before).filter((rows) => rows !== '[]').length).toBeGreaterThanOrEqual(8);
    const report: string[] = [];
    // Reads first: B may legitimately create its own resources under ids A also uses, after which
    // B's reads would find B's own.
    const ordered = [...restRoutes].sort((x, y) => Number(x.method !== 'GET') - Number(y.method !== 'GET'));
    for (const route of ordered) {
      const prefix = area(route.path);
      const path = route.path.replace(/:([A-Za-z]+)/g, (_, name: string) => encodeURIComponent(ids[`${prefix}:${name}`] ?? 'x'));
      const query = new URLSearchParams({ sessionId: ids['rs:sessionId'], reqId: ids['rs:reqId'], requestId: ids['rs:reqId'], appId: 'fleet-app' });
      const url = route.method === 'GET' && prefix === 'rs' ? `${path}?${query}` : path;
      const body = route.method === 'GET' || route.method === 'DELETE' ? undefined : withIdsOfA(route.docs?.requestExample ?? {}, prefix);
      const res = await t.request(route.method, url, { token: b.token, body });
      const text = JSON.stringify(res.body);
      report.push(`${res.status} ${route.method} ${route.path}`);
      expect(res.status, `${route.method} ${route.path}`).toBeLessThan(500);
      for (const marker of [MARKER_DOB, MARKER_NAME, Buffer.from(MARKER_NAME).toString('base64')]) {
        expect(text.includes(marker), `${route.method} ${route.path} leaked ${marker}`).toBe(false);
      }
      const referencesA = /:(userId|vin|bookingId|reqId|contentid|memberId|deviceId|vehicleId|deliveryId|id(?=\/|$))/.test(route.path);
      if (route.method === 'GET' && referencesA) expect([400, 403, 404], `${route.method} ${route.path}`).toContain(res.status);
    }
    const after = await snapshotRows(t.stack, 'org-a');
    expect(after).toEqual(before);
    console.log(`tenancy sweep: ${restRoutes.length} REST routes called as organisation B; A's ${Object.keys(before).length} tables unchanged\n  ${report.join('\n  ')}`);
  });

});
