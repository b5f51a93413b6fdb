import { getIntrospectionQuery } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { internalBearer } from '../support/internal-token.ts';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';

let t: TestStack;
const defaultCaller = () => ({ clientId: DEFAULT_CLIENT.id, orgId: t.org, scopes: ['b2b' as const] });

const booking = () => t.stack.subgraphs.find((s) => s.name === 'booking')!;
/** SQL statements the booking subgraph has run so far. */
const statements = () => booking().db.statements.count;

/** The document: `aliases` copies of four nested booking lists, no `first` anywhere. */
function nestedBookings(aliases: number) {
  const nest = 'bookings { nodes { bookingId vehicle { bookings { nodes { bookingId vehicle { bookings { nodes { bookingId vehicle { bookings { nodes { bookingId } } } } } } } } } } }';
  return `{ ${Array.from({ length: aliases }, (_, i) => `a${i}: ${nest}`).join(' ')} }`;
}

/** Two nested pages of `$n` bookings: 1 + n x (3 + n). */
const PAGED = 'bookings(first: $n) { nodes { bookingId vehicle { bookings(first: $n) { nodes { bookingId } } } } }';

describe('GraphQL cost counts what will be returned', () => {
  beforeAll(async () => { t = await startTestStack({ subgraphs: ['booking'] }); });
  afterAll(async () => { await t?.close(); });

  it('refuses the issue\'s 30 aliases of four nested lists without `first` before any work, naming cost and limit', async () => {
    const before = statements();
    const res = await t.graphql(nestedBookings(30));
    expect(res.status).toBe(400);
    expect(res.data).toBeUndefined();
    expect(res.errors?.[0].extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    expect(res.errors?.[0].extensions?.maxCost).toBe(20_000);
    expect(res.errors?.[0].extensions?.cost).toBeGreaterThan(30 * 20 ** 4);
    expect(res.errors?.[0].message).toMatch(/cost .* limit of 20000/);
    expect(statements()).toBe(before);
  });

  it('counts `first: $n` as n', async () => {
    const small = await t.graphql(`query Q($n: Int) { ${PAGED} }`, { n: 10 });
    expect(small.errors).toBeUndefined();
    const large = await t.graphql(`query Q($n: Int) { ${PAGED} }`, { n: 150 });
    expect(large.status).toBe(400);
    expect(large.errors?.[0].extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    expect(large.errors?.[0].extensions?.cost).toBe(1 + 150 * (3 + 150));
  });

  it('estimates again a repeated document whose @skip reads a variable; one whose cost reads none still has its variables checked', async () => {
    const skipped = `query S($skip: Boolean!) { ${nestedBookings(30).slice(2, -2).replaceAll(/(a\d+): bookings/g, '$1: bookings @skip(if: $skip)')} }`;
    expect((await t.graphql(skipped, { skip: true })).errors).toBeUndefined();
    const large = await t.graphql(skipped, { skip: false });
    expect(large.status).toBe(400);
    expect(large.errors?.[0].extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    const fixed = 'query F($vin: VIN!) { vehicle(vin: $vin) { vin bookings(first: 5) { nodes { bookingId } } } }';
    const first = await t.graphql(fixed, { vin: '1HGCM82633A00C099' });
    expect(first.errors).toBeUndefined();
    expect(first.data.vehicle).toBeNull();
    const invalid = await t.graphql(fixed, { vin: 5 });
    expect(invalid.status).toBe(400);
    expect(invalid.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('refuses a mutation over the limit before it runs: nothing is committed', async () => {
    const vin = '1HGCM82633A00C057';
    const res = await t.graphql(`mutation M($n: Int) { createVehicle(vin: "${vin}", deviceId: "356938035643809") { vin ${PAGED} } }`, { n: 150 });
    expect(res.status).toBe(400);
    expect(res.errors?.[0].extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    const read = await t.graphql(`{ vehicle(vin: "${vin}") { vin } }`);
    expect(read.errors).toBeUndefined();
    expect(read.data.vehicle).toBeNull();
  });

  it('lets the IDE\'s full introspection through the default answer cap', async () => {
    const res = await t.graphql(getIntrospectionQuery({ descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true }));
    expect(res.errors).toBeUndefined();
    expect(res.data.__schema.types.length).toBeGreaterThan(100);
  });

  it('applies the same limit in the subgraph\'s own server', async () => {
    const sub = booking();
    const contextValue = await sub.context(await internalBearer(t.config, 'booking', defaultCaller()), 'cost-test', sub.app.log);
    const response = await sub.apollo.executeOperation({ query: nestedBookings(2) }, { contextValue });
    expect(response.http.status).toBe(400);
    const body = response.body.kind === 'single' ? response.body.singleResult : undefined;
    expect(body?.errors?.[0].extensions?.code).toBe('COST_LIMIT_EXCEEDED');
  });
});

describe('answer size cap', () => {
  const vin = '1HGCM82633A00S1ZE';
  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['booking'], env: { GRAPHQL_MAX_RESPONSE_OBJECTS: '100' } });
    const created = await t.graphql(`mutation { createVehicle(vin: "${vin}", deviceId: "356938035643810") { vin } }`);
    expect(created.errors).toBeUndefined();
    for (let batch = 0; batch < 4; batch++) {
      const starts = Array.from({ length: 25 }, (_, i) => {
        const start = 1_800_000_000 + (batch * 25 + i) * 1000;
        return `b${i}: startBooking(input: { vin: "${vin}", startTimestamp: ${start}, estimatedEndTimestamp: ${start + 500} }) { bookingId }`;
      });
      const res = await t.graphql(`mutation { ${starts.join(' ')} }`);
      expect(res.errors).toBeUndefined();
    }
  });
  afterAll(async () => { await t?.close(); });

  it('answers an answer of more objects than GRAPHQL_MAX_RESPONSE_OBJECTS as one RESPONSE_TOO_LARGE error (400)', async () => {
    const fits = await t.graphql('{ bookings(first: 40) { nodes { bookingId vehicle { vin } } } }');
    expect(fits.errors).toBeUndefined();
    expect(fits.data.bookings.nodes).toHaveLength(40);
    const res = await t.graphql('{ bookings(first: 100) { nodes { bookingId vehicle { vin } } } }');
    expect(res.status).toBe(400);
    expect(res.data).toBeUndefined();
    expect(res.errors).toHaveLength(1);
    expect(res.errors?.[0].extensions?.code).toBe('RESPONSE_TOO_LARGE');
  });

  it('answers it on a REST path as 400 problem+json', async () => {
    const fits = await t.request('GET', '/shared-mobility-insights/v2/bookings?first=20', { token: t.token });
    expect(fits.status).toBe(200);
    const res = await t.request('GET', '/shared-mobility-insights/v2/bookings?first=100', { token: t.token });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(res.body.code).toBe('RESPONSE_TOO_LARGE');
  });

  it('caps the subgraph\'s own server too', async () => {
    const sub = booking();
    const contextValue = await sub.context(await internalBearer(t.config, 'booking', defaultCaller()), 'cap-test', sub.app.log);
    const response = await sub.apollo.executeOperation({ query: '{ bookings(first: 100) { nodes { bookingId } } }' }, { contextValue });
    expect(response.http.status).toBe(400);
    const body = response.body.kind === 'single' ? response.body.singleResult : undefined;
    expect(body?.data).toBeUndefined();
    expect(body?.errors?.map((e) => e.extensions?.code)).toEqual(['RESPONSE_TOO_LARGE']);
  });
});
