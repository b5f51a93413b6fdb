import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedTestStack } from '../support/shared-stack.ts';
import type { TestStack } from '../support/stack.ts';

const P = '/shared-mobility-insights/v2';
let t: TestStack;
let orgB: string;

beforeAll(async () => {
  t = await sharedTestStack({ subgraphs: ['booking', 'scoring'] });
  orgB = (await t.clientFor('org-b')).token;
});
afterAll(async () => { await t?.close(); });

let counter = 0;
const nextVin = () => `GQL${String(++counter).padStart(14, '0')}`;

const bookingStatements = () => t.stack.subgraphs.find((s) => s.name === 'booking')!.db.statements;

const codeOf = (res: { errors?: { extensions?: Record<string, unknown> }[] }) => res.errors?.[0]?.extensions?.code;

const CREATE_VEHICLE = 'mutation($vin: VIN!, $deviceId: ID) { createVehicle(vin: $vin, deviceId: $deviceId) { vin VIN deviceId deviceID } }';
const START = 'mutation($input: BookingStartInput!) { startBooking(input: $input) { bookingId bookingID vin VIN userId userID deviceId deviceID startTimestamp estimatedEndTimestamp actualEndTimestamp status } }';
const END = 'mutation($id: ID!, $end: EpochSeconds!) { endBooking(bookingId: $id, actualEndTimestamp: $end) { bookingId actualEndTimestamp status } }';

async function vehicle(deviceId: string | null = `dev-${counter + 1}`, token = t.token, vin = nextVin()) {
  const res = await t.graphql(CREATE_VEHICLE, { vin, deviceId }, token);
  expect(res.errors).toBeUndefined();
  return vin;
}

async function start(input: Record<string, unknown>, token = t.token) {
  const res = await t.graphql(START, { input }, token);
  expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
  return res.data.startBooking as { bookingId: string; userId: string };
}

/** Starts `count` consecutive one-hour bookings on `vin` in one request (aliased root fields run in order). */
async function startMany(vin: string, count: number, userId: (i: number) => string, from = 0) {
  const fields = Array.from({ length: count }, (_, i) =>
    `b${i}: startBooking(input: { vin: "${vin}", bookingId: "${vin}-${from + i}", userId: "${userId(i)}", startTimestamp: ${10_000 + (from + i) * 3_600}, estimatedEndTimestamp: ${10_000 + (from + i + 1) * 3_600} }) { bookingId }`);
  const res = await t.graphql(`mutation { ${fields.join('\n')} }`);
  expect(res.errors, JSON.stringify(res.errors?.[0])).toBeUndefined();
}

describe('vehicles and bookings through GraphQL', () => {
  it('creates a vehicle, pairs a device, starts and ends a booking', async () => {
    const vin = nextVin();
    const created = await t.graphql(CREATE_VEHICLE, { vin: vin.toLowerCase() });
    expect(created.data.createVehicle).toEqual({ vin, VIN: vin, deviceId: null, deviceID: null });
    const paired = await t.graphql('mutation($vin: VIN!) { pairDevice(vin: $vin, deviceId: "imei-1") { vin deviceId } }', { vin });
    expect(paired.data.pairDevice).toEqual({ vin, deviceId: 'imei-1' });
    const booking = await t.graphql(START, { input: { vin, bookingId: `gq-${vin}`, userId: 'gq-user', startTimestamp: 100, estimatedEndTimestamp: 200 } });
    expect(booking.data.startBooking).toEqual({
      bookingId: `gq-${vin}`, bookingID: `gq-${vin}`, vin, VIN: vin, userId: 'gq-user', userID: 'gq-user', deviceId: 'imei-1', deviceID: 'imei-1',
      startTimestamp: 100, estimatedEndTimestamp: 200, actualEndTimestamp: null, status: 'ACTIVE',
    });
    const ended = await t.graphql(END, { id: `gq-${vin}`, end: 150 });
    expect(ended.data.endBooking).toEqual({ bookingId: `gq-${vin}`, actualEndTimestamp: 150, status: 'ENDED' });
    const read = await t.graphql('query($id: ID!, $vin: VIN!) { booking(bookingId: $id) { status vehicle { vin deviceID } } vehicle(vin: $vin) { vin createdAt } }', { id: `gq-${vin}`, vin });
    expect(read.data.booking).toEqual({ status: 'ENDED', vehicle: { vin, deviceID: 'imei-1' } });
    expect(read.data.vehicle.createdAt).toMatch(/^\d{4}-/);
  });

  it('answers every rule with its code', async () => {
    const vin = await vehicle(null);
    expect(codeOf(await t.graphql(CREATE_VEHICLE, { vin }))).toBe('CONFLICT');
    expect(codeOf(await t.graphql(CREATE_VEHICLE, { vin: 'ABC' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.graphql('mutation { pairDevice(vin: "ZZZZZZZZZZZZZZZZZ", deviceId: "x") { vin } }'))).toBe('NOT_FOUND');
    expect(codeOf(await t.graphql(START, { input: { vin: nextVin(), deviceId: 'x', startTimestamp: 1 } }))).toBe('NOT_FOUND');
    expect(codeOf(await t.graphql(START, { input: { vin, startTimestamp: 1 } }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.graphql(START, { input: { vin, deviceId: 'x', startTimestamp: 5, estimatedEndTimestamp: 5 } }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.graphql(START, { input: { vin, deviceId: 'x' } }))).toBe('BAD_USER_INPUT');
    const { bookingId } = await start({ vin, deviceId: 'x', startTimestamp: 10 });
    expect(codeOf(await t.graphql(START, { input: { vin, startTimestamp: 20 } }))).toBe('CONFLICT');
    expect(codeOf(await t.graphql(START, { input: { vin, bookingId, startTimestamp: 1, estimatedEndTimestamp: 5 } }))).toBe('CONFLICT');
    expect(codeOf(await t.graphql(END, { id: bookingId, end: 10 }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.graphql(END, { id: 'nope', end: 10 }))).toBe('NOT_FOUND');
    expect(codeOf(await t.graphql(END, { id: bookingId, end: 11 }))).toBeUndefined();
    expect(codeOf(await t.graphql(END, { id: bookingId, end: 12 }))).toBe('CONFLICT');
    const missing = await t.graphql('{ vehicle(vin: "ZZZZZZZZZZZZZZZZZ") { vin } booking(bookingId: "nope") { bookingId } }');
    expect(missing.data).toEqual({ vehicle: null, booking: null });
  });
});

describe('listing and paging', () => {
  const LIST = `query($filter: BookingFilter, $first: Int, $after: String) {
    bookings(filter: $filter, first: $first, after: $after) { edges { cursor node { bookingId } } nodes { bookingId } pageInfo { hasNextPage endCursor } } }`;

  interface Connection { edges: { cursor: string; node: { bookingId: string } }[]; nodes: { bookingId: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } }

  async function all(filter: Record<string, unknown>, first: number) {
    const ids: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const res: { data?: { bookings: Connection }; errors?: unknown[] } = await t.graphql(LIST, { filter, first, after });
      expect(res.errors).toBeUndefined();
      const page: Connection = res.data!.bookings;
      expect(page.edges.map((e) => e.node.bookingId)).toEqual(page.nodes.map((n) => n.bookingId));
      ids.push(...page.nodes.map((n) => n.bookingId));
      pages += 1;
      if (!page.pageInfo.hasNextPage) break;
      expect(page.pageInfo.endCursor).toBe(page.edges.at(-1)?.cursor);
      after = page.pageInfo.endCursor;
    }
    return { ids, pages };
  }

  it('walks every booking of a vehicle exactly once, most recent first, with opaque cursors', async () => {
    const vin = await vehicle();
    await startMany(vin, 25, (i) => `pager-${i % 2}`);
    const { ids, pages } = await all({ vin }, 10);
    expect(pages).toBe(3);
    expect(ids).toEqual(Array.from({ length: 25 }, (_, i) => `${vin}-${24 - i}`));
    const first = await t.graphql(LIST, { filter: { vin }, first: 1 });
    expect(first.data.bookings.pageInfo.endCursor).not.toContain(vin);
  });

  it('filters by user, status and start time', async () => {
    const vin = await vehicle();
    await startMany(vin, 6, (i) => (i < 4 ? `filter-user-${vin}` : 'someone-else'));
    await t.graphql(END, { id: `${vin}-0`, end: 10_000 + 60 });
    expect((await all({ userId: `filter-user-${vin}` }, 100)).ids).toEqual([3, 2, 1, 0].map((i) => `${vin}-${i}`));
    expect((await all({ vin, status: 'ENDED' }, 100)).ids).toEqual([`${vin}-0`]);
    expect((await all({ vin, status: 'ACTIVE' }, 2)).ids).toHaveLength(5);
    const from = 10_000 + 2 * 3_600;
    const to = 10_000 + 4 * 3_600;
    expect((await all({ vin, startFrom: from, startTo: to }, 100)).ids).toEqual([`${vin}-3`, `${vin}-2`]);
    expect((await all({ vin, userId: 'someone-else', startFrom: from }, 100)).ids).toEqual([`${vin}-5`, `${vin}-4`]);
  });

  it('validates first and after', async () => {
    for (const first of [0, -1, 101]) expect(codeOf(await t.graphql(LIST, { first })), String(first)).toBe('BAD_USER_INPUT');
    for (const after of ['garbage', Buffer.from('[1]').toString('base64url')]) expect(codeOf(await t.graphql(LIST, { after }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.graphql(LIST, { filter: { startFrom: 10, startTo: 10 } }))).toBe('BAD_USER_INPUT');
    const nested = await t.graphql('{ bookings(first: 1) { nodes { vehicle { bookings(first: 500) { nodes { bookingId } } } } } }');
    expect(codeOf(nested)).toBe('BAD_USER_INPUT');
  });

  it('pages Vehicle.bookings with its own cursor and status', async () => {
    const vin = await vehicle();
    await startMany(vin, 5, () => 'vb');
    await t.graphql(END, { id: `${vin}-1`, end: 10_000 + 3_600 + 60 });
    const Q = 'query($vin: VIN!, $after: String, $status: BookingStatus) { vehicle(vin: $vin) { bookings(first: 2, after: $after, status: $status) { nodes { bookingId } pageInfo { hasNextPage endCursor } } } }';
    const p1 = (await t.graphql(Q, { vin })).data.vehicle.bookings;
    expect(p1.nodes.map((n: { bookingId: string }) => n.bookingId)).toEqual([`${vin}-4`, `${vin}-3`]);
    const p2 = (await t.graphql(Q, { vin, after: p1.pageInfo.endCursor })).data.vehicle.bookings;
    expect(p2.nodes.map((n: { bookingId: string }) => n.bookingId)).toEqual([`${vin}-2`, `${vin}-1`]);
    const p3 = (await t.graphql(Q, { vin, after: p2.pageInfo.endCursor })).data.vehicle.bookings;
    expect(p3).toMatchObject({ nodes: [{ bookingId: `${vin}-0` }], pageInfo: { hasNextPage: false } });
    const ended = (await t.graphql(Q, { vin, status: 'ENDED' })).data.vehicle.bookings;
    expect(ended.nodes).toEqual([{ bookingId: `${vin}-1` }]);
  });
});

describe('federation with the scoring subgraph', () => {
  it('User.bookings lists a user\'s bookings through the gateway, paged', async () => {
    const userId = `fed-user-${counter}`;
    expect((await t.request('POST', `${P}/users`, { token: t.token, body: { userID: userId, homeZip: '60601' } })).status).toBe(201);
    const [v1, v2] = [await vehicle(), await vehicle()];
    await startMany(v1, 2, () => userId);
    await startMany(v2, 2, () => userId, 2);
    const Q = `query($id: ID!, $after: String) { user(userId: $id) { userId homeZip enrollmentStatus
      bookings(first: 3, after: $after) { nodes { bookingId vin user { homeZip } } pageInfo { hasNextPage endCursor } } } }`;
    const res = await t.graphql(Q, { id: userId });
    expect(res.errors).toBeUndefined();
    expect(res.data.user).toMatchObject({ userId, homeZip: '60601', enrollmentStatus: 'PENDING' });
    expect(res.data.user.bookings.nodes).toEqual([
      { bookingId: `${v2}-3`, vin: v2, user: { homeZip: '60601' } },
      { bookingId: `${v2}-2`, vin: v2, user: { homeZip: '60601' } },
      { bookingId: `${v1}-1`, vin: v1, user: { homeZip: '60601' } },
    ]);
    const rest = await t.graphql(Q, { id: userId, after: res.data.user.bookings.pageInfo.endCursor });
    expect(rest.data.user.bookings).toEqual({ nodes: [{ bookingId: `${v1}-0`, vin: v1, user: { homeZip: '60601' } }], pageInfo: { hasNextPage: false, endCursor: expect.any(String) } });
  });

  it('Booking.user resolves a known user and is null for an id scoring does not know', async () => {
    await t.request('POST', `${P}/users`, { token: t.token, body: { userID: 'known-driver', homeZip: '94105' } });
    const vin = await vehicle();
    const known = await start({ vin, userId: 'known-driver', startTimestamp: 100, estimatedEndTimestamp: 200 });
    const unknown = await start({ vin, userId: 'nobody-we-know', startTimestamp: 200, estimatedEndTimestamp: 300 });
    const generated = await start({ vin, startTimestamp: 300, estimatedEndTimestamp: 400 });
    // scoring resolves Booking.user (with @requires userId), so it is null whatever User fields are selected
    const Q = 'query($id: ID!) { booking(bookingId: $id) { userId user { userId enrollmentStatus homeZip } } }';
    const nullable = 'query($id: ID!) { booking(bookingId: $id) { user { userId homeZip } } }';
    expect((await t.graphql(nullable, { id: unknown.bookingId })).data.booking).toEqual({ user: null });
    expect((await t.graphql(Q, { id: known.bookingId })).data.booking).toEqual({
      userId: 'known-driver', user: { userId: 'known-driver', enrollmentStatus: 'PENDING', homeZip: '94105' },
    });
    expect((await t.graphql(Q, { id: unknown.bookingId })).data.booking).toEqual({ userId: 'nobody-we-know', user: null });
    expect((await t.graphql(Q, { id: generated.bookingId })).data.booking).toEqual({ userId: generated.userId, user: null });
  });

  it('a user with no bookings has an empty list', async () => {
    await t.request('POST', `${P}/users`, { token: t.token, body: { userID: 'no-bookings' } });
    const res = await t.graphql('{ user(userId: "no-bookings") { bookings { nodes { bookingId } pageInfo { hasNextPage endCursor } } } }');
    expect(res.data.user.bookings).toEqual({ nodes: [], pageInfo: { hasNextPage: false, endCursor: null } });
  });
});

describe('SQL statements per request', () => {
  const Q = `query($first: Int, $vin: VIN) { bookings(first: $first, filter: { vin: $vin }) { nodes { bookingId vehicle { vin deviceId bookings(first: 2) { nodes { bookingId } } } } } }`;
  const WIDE = `query($first: Int) { bookings(first: $first) { nodes { bookingId vehicle { vin deviceId bookings(first: 2) { nodes { bookingId } } } } } }`;

  async function statementsFor(query: string, variables: Record<string, unknown>) {
    bookingStatements().reset();
    const res = await t.graphql(query, variables);
    expect(res.errors).toBeUndefined();
    return { count: bookingStatements().count, nodes: res.data.bookings.nodes as unknown[] };
  }

  it('listing 100 bookings with their vehicle (and its bookings) costs the same few statements as listing 2', async () => {
    const vins: string[] = [];
    for (let i = 0; i < 20; i++) vins.push(await vehicle());
    for (const vin of vins) await startMany(vin, 5, () => 'stmt-user');
    const two = await statementsFor(WIDE, { first: 2 });
    const hundred = await statementsFor(WIDE, { first: 100 });
    expect(two.nodes).toHaveLength(2);
    expect(hundred.nodes).toHaveLength(100);
    expect(new Set(hundred.nodes.map((n) => (n as { vehicle: { vin: string } }).vehicle.vin)).size).toBeGreaterThanOrEqual(20);
    // One statement for the page, one for the vehicles, one for the vehicles' bookings.
    expect(hundred.count).toBe(3);
    expect(two.count).toBe(hundred.count);
    const oneVehicle = await statementsFor(Q, { first: 5, vin: vins[0] });
    expect(oneVehicle.count).toBe(3);
  });

  it('User.bookings of every listed booking\'s user costs the same statements for 2 bookings as for 10', async () => {
    const vin = await vehicle();
    const users = Array.from({ length: 10 }, (_, i) => `many-${vin}-${i}`);
    for (const u of users) await t.request('POST', `${P}/users`, { token: t.token, body: { userID: u } });
    await startMany(vin, 10, (i) => users[i]);
    const USERS = `query($vin: VIN, $first: Int) { bookings(filter: { vin: $vin }, first: $first) {
      nodes { bookingId user { userId enrollmentStatus bookings(first: 5) { nodes { bookingId } } } } } }`;
    const two = await statementsFor(USERS, { vin, first: 2 });
    const ten = await statementsFor(USERS, { vin, first: 10 });
    expect(ten.nodes).toHaveLength(10);
    expect((ten.nodes[3] as { user: { bookings: unknown } }).user.bookings).toEqual({ nodes: [{ bookingId: `${vin}-6` }] });
    expect(ten.count).toBe(two.count);
    expect(ten.count).toBeLessThanOrEqual(2);
  });
});

describe('organisations', () => {
  it('another organisation can neither see nor change vehicles or bookings, and may reuse a VIN', async () => {
    const vin = await vehicle('org-a-device');
    const booking = await start({ vin, bookingId: `iso-${vin}`, userId: 'iso-user', startTimestamp: 100 });
    const get = (path: string) => t.request('GET', `${P}${path}`, { token: orgB });

    expect((await get(`/vehicles/${vin}`)).status).toBe(404);
    expect((await get(`/bookings/${booking.bookingId}`)).status).toBe(404);
    expect((await t.request('PUT', `${P}/bookings/${booking.bookingId}`, { token: orgB, body: { actualEndTimestamp: 500 } })).status).toBe(404);
    expect((await t.request('POST', `${P}/vehicles/${vin}/devices/org-b-device`, { token: orgB })).status).toBe(404);
    expect((await t.request('POST', `${P}/bookings`, { token: orgB, body: { VIN: vin, deviceID: 'x', startTimestamp: 1 } })).status).toBe(404);
    const gql = await t.graphql(`{ vehicle(vin: "${vin}") { vin } booking(bookingId: "iso-${vin}") { bookingId } bookings(filter: { userId: "iso-user" }) { nodes { bookingId } } }`, {}, orgB);
    expect(gql.data).toEqual({ vehicle: null, booking: null, bookings: { nodes: [] } });

    // Org B may create the same VIN, pair the same device, use the same booking id and overlap in time.
    expect((await t.request('POST', `${P}/vehicles`, { token: orgB, body: { VIN: vin, deviceID: 'org-a-device' } })).status).toBe(201);
    const mine = await t.request('POST', `${P}/bookings`, { token: orgB, body: { VIN: vin, bookingID: `iso-${vin}`, userID: 'iso-user', startTimestamp: 50 } });
    expect(mine.status).toBe(201);
    const vehicleB = await t.graphql(`{ vehicle(vin: "${vin}") { deviceId bookings { nodes { bookingId startTimestamp } } } }`, {}, orgB);
    expect(vehicleB.data.vehicle).toEqual({ deviceId: 'org-a-device', bookings: { nodes: [{ bookingId: `iso-${vin}`, startTimestamp: 50 }] } });

    // Org A's data is untouched.
    const mineA = await t.graphql(`{ vehicle(vin: "${vin}") { deviceId bookings { nodes { bookingId startTimestamp actualEndTimestamp } } } }`);
    expect(mineA.data.vehicle).toEqual({ deviceId: 'org-a-device', bookings: { nodes: [{ bookingId: `iso-${vin}`, startTimestamp: 100, actualEndTimestamp: null }] } });
  });

  it('User.bookings only shows the caller\'s organisation', async () => {
    const userId = `shared-user-${counter}`;
    for (const token of [t.token, orgB]) await t.request('POST', `${P}/users`, { token, body: { userID: userId } });
    const vinA = await vehicle();
    const vinB = await vehicle(`b-${counter}`, orgB);
    await start({ vin: vinA, userId, bookingId: `a-${userId}`, startTimestamp: 10 });
    await start({ vin: vinB, userId, bookingId: `b-${userId}`, startTimestamp: 10 }, orgB);
    const Q = `{ user(userId: "${userId}") { bookings { nodes { bookingId } } } }`;
    expect((await t.graphql(Q)).data.user.bookings.nodes).toEqual([{ bookingId: `a-${userId}` }]);
    expect((await t.graphql(Q, {}, orgB)).data.user.bookings.nodes).toEqual([{ bookingId: `b-${userId}` }]);
  });
});
