/**
 * Request errors are request errors: custom scalars (VIN, EpochSeconds, Date, ...) are coerced at
 * the gateway, so a bad variable is a 400 BAD_USER_INPUT naming it with no `data`, as for Int; and
 * the gateway's own 401 answers honour `Accept: application/graphql-response+json`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';

const GRAPHQL_RESPONSE = 'application/graphql-response+json';
let t: TestStack;
beforeAll(async () => { t = await startTestStack({ subgraphs: ['booking', 'scoring'] }); });
afterAll(async () => { await t?.close(); });

const post = (body: unknown, headers: Record<string, string> = {}) => fetch(`${t.url}/graphql`, {
  method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${t.token}`, ...headers }, body: JSON.stringify(body),
});

describe('custom scalars coerced at the gateway', () => {
  it.each([
    ['VIN', 'query($vin: VIN!) { vehicle(vin: $vin) { vin } }', { vin: 'NOPE' }, /Variable "\$vin" got invalid value "NOPE"; .*VIN must be exactly 17/],
    ['EpochSeconds', 'query($f: BookingFilter) { bookings(filter: $f) { nodes { bookingId } } }', { f: { startFrom: 'abc' } }, /Variable "\$f" got invalid value "abc" at "f.startFrom"; .*EpochSeconds must be/],
    ['Date', 'mutation($input: CreateUserInput!) { createUser(input: $input) { userId } }', { input: { userId: 'scalar-date', dateOfBirth: '1985-13-45' } }, /Variable "\$input" got invalid value "1985-13-45" at "input.dateOfBirth"; .*Date must be a real calendar day/],
    ['ZipCode', 'mutation($zip: ZipCode) { createUser(input: { userId: "scalar-zip", homeZip: $zip }) { userId } }', { zip: '6060' }, /Variable "\$zip" got invalid value "6060"; .*ZipCode must be/],
  ])('answers a bad %s variable with 400 BAD_USER_INPUT naming it, and no data', async (_scalar, query, variables, message) => {
    const res = await post({ query, variables });
    expect(res.status).toBe(400);
    const body = await res.json() as { data?: unknown; errors: { message: string; extensions: { code: string } }[] };
    expect(body).not.toHaveProperty('data');
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
    expect(body.errors[0]!.message).toMatch(message);
  });

  it('answers a bad Int variable the same way', async () => {
    const res = await post({ query: 'query($n: Int) { bookings(first: $n) { nodes { bookingId } } }', variables: { n: 'x' } });
    expect(res.status).toBe(400);
    expect((await res.json() as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('BAD_USER_INPUT');
  });

  it('refuses a bad literal before any subgraph runs, as for a bad Int literal', async () => {
    for (const query of ['{ vehicle(vin: "NOPE") { vin } }', '{ bookings(filter: { startFrom: "abc" }) { nodes { bookingId } } }', '{ bookings(first: "x") { nodes { bookingId } } }']) {
      const res = await post({ query });
      expect(res.status, query).toBe(400);
      const body = await res.json() as { data?: unknown; errors: { extensions: { code: string } }[] };
      expect(body, query).not.toHaveProperty('data');
      expect(body.errors[0]!.extensions.code, query).toBe('GRAPHQL_VALIDATION_FAILED');
    }
  });

  it('still accepts good values, normalised by the subgraph', async () => {
    const vin = '1hgcm82633a0' + String(Date.now()).slice(-5);
    const created = await post({ query: 'mutation($vin: VIN!) { createVehicle(vin: $vin) { vin } }', variables: { vin } });
    expect(await created.json()).toEqual({ data: { createVehicle: { vin: vin.toUpperCase() } } });
  });
});

describe('the gateway\'s refusals honour the GraphQL response media type', () => {
  it('answers a bad token with 401 as application/graphql-response+json when that is what the client accepts', async () => {
    const res = await post({ query: '{ __typename }' }, { authorization: 'Bearer not-a-token', accept: GRAPHQL_RESPONSE });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    expect(await res.json()).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
  });

  it('keeps application/json for clients that ask for it or for anything', async () => {
    for (const accept of ['application/json', '*/*', `application/json, ${GRAPHQL_RESPONSE};q=0.5`]) {
      const res = await post({ query: '{ __typename }' }, { authorization: 'Bearer not-a-token', accept });
      expect(res.status, accept).toBe(401);
      expect(res.headers.get('content-type'), accept).toMatch(/^application\/json/);
    }
  });

  it('answers a CSRF refusal in the accepted type too', async () => {
    const res = await fetch(`${t.url}/graphql`, { method: 'POST', headers: { 'content-type': 'text/plain', accept: GRAPHQL_RESPONSE }, body: '{}' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
  });
});
