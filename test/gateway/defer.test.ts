import { meros } from 'meros/browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { acceptsIncremental } from '../../gateway/http/multipart.ts';
import { merged, type Json, type Payload } from '../support/deferred-parts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/** What Apollo Client 4 sends with Defer20220824Handler. */
const MULTIPART = 'multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9';
const USER_ID = 'defer-user';
const VINS = ['1HGCM82633A0D0001', '1HGCM82633A0D0002'];
const LOOP = 'POINT(-87.6298 41.8781)';

describe('@defer through the gateway (meros, as a client reads multipart/mixed)', () => {
  let t: TestStack;

  /** POST (or GET) /graphql; the parts of a multipart answer, or the one JSON answer as a single part. */
  async function ask(query: string, variables: Json = {}, { accept = MULTIPART, method = 'POST' } = {}) {
    const headers = { accept, authorization: `Bearer ${t.token}`, 'content-type': 'application/json' };
    const url = method === 'GET' ? `${t.url}/graphql?${new URLSearchParams({ query, variables: JSON.stringify(variables) })}` : `${t.url}/graphql`;
    const response = await fetch(url, { method, headers, body: method === 'GET' ? undefined : JSON.stringify({ query, variables }) });
    const parts = await meros<Payload>(response);
    const payloads: Payload[] = [];
    if (parts instanceof Response) payloads.push(await parts.json() as Payload);
    else for await (const part of parts) payloads.push(part.body as Payload);
    return { status: response.status, type: response.headers.get('content-type'), payloads };
  }

  beforeAll(async () => {
    // roadside stays unreachable (a failing subgraph); a small answer-size cap so that deferred parts can reach it.
    t = await startTestStack({ subgraphs: ['risk', 'scoring', 'booking'], env: { GRAPHQL_MAX_RESPONSE_OBJECTS: '100' } });
    await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
    expect((await t.graphql('mutation($id: ID) { createUser(input: { userId: $id, homeZip: "60601" }) { userId } }', { id: USER_ID })).errors).toBeUndefined();
    for (const [i, vin] of VINS.entries()) {
      expect((await t.graphql('mutation($vin: VIN!, $device: ID) { createVehicle(vin: $vin, deviceId: $device) { vin } }', { vin, device: `device-${i}` })).errors).toBeUndefined();
      const input = { vin, bookingId: `defer-${i}`, userId: USER_ID, startTimestamp: 100 + i, estimatedEndTimestamp: 200 };
      expect((await t.graphql('mutation($input: BookingStartInput!) { startBooking(input: $input) { bookingId } }', { input })).errors).toBeUndefined();
    }
  }, 180_000);
  afterAll(async () => { await t?.close(); });

  const USER_AND_MAP = `query UserAndMap($id: ID!, $wkt: WKT!) {
    user(userId: $id) {
      id userId homeZip
      bookings(first: 10) { nodes { id bookingId ... @defer(label: "vehicle") { vehicle { id vin } } } }
    }
    ... @defer(label: "map") { riskIndex(wkt: $wkt, radius: 0.005) { riskInfo { index } map } }
  }`;

  it('sends the primary selection first, then each deferred fragment with its label and path (one item per list element); the merged answer is the undeferred one', async () => {
    const variables = { id: USER_ID, wkt: LOOP };
    const { status, type, payloads } = await ask(USER_AND_MAP, variables);
    expect(status).toBe(200);
    expect(type).toBe('multipart/mixed; boundary="-"; deferSpec=20220824');
    const [first, ...rest] = payloads;
    expect(first).toMatchObject({ hasNext: true, data: { user: { userId: USER_ID, bookings: { nodes: [{ bookingId: 'defer-1' }, { bookingId: 'defer-0' }] } } } });
    expect(first!.data).not.toHaveProperty('riskIndex');
    expect((first!.data!.user as { bookings: { nodes: Json[] } }).bookings.nodes[0]).not.toHaveProperty('vehicle');
    expect(rest.at(-1)!.hasNext).toBe(false);
    expect(rest.slice(0, -1).every((p) => p.hasNext)).toBe(true);
    const items = rest.flatMap((p) => p.incremental ?? []);
    expect(items.filter((i) => i.label === 'map')).toEqual([{ label: 'map', path: [], data: { riskIndex: { riskInfo: { index: expect.any(Number) }, map: expect.stringMatching(/^<svg/) } } }]);
    expect(items.filter((i) => i.label === 'vehicle').map((i) => i.path).sort()).toEqual([['user', 'bookings', 'nodes', 0], ['user', 'bookings', 'nodes', 1]]);

    const single = await ask(USER_AND_MAP, variables, { accept: 'application/json' });
    expect(single.type).toMatch(/^application\/json/);
    expect(single.payloads).toHaveLength(1);
    expect(merged(payloads)).toEqual({ data: single.payloads[0]!.data, errors: [] });
  });

  it('collapses identical deferred requests in flight only with requests asking for the same format', async () => {
    const variables = { id: USER_ID, wkt: 'POINT(-87.64 41.89)' };
    const collapsed = async () => (await t.stack.gateway.metrics.collapsed.get()).values.reduce((sum, v) => sum + v.value, 0);
    const before = await collapsed();
    const [parts, json, sameParts] = await Promise.all([
      ask(USER_AND_MAP, variables), ask(USER_AND_MAP, variables, { accept: 'application/json' }), ask(USER_AND_MAP, variables),
    ]);
    for (const multipart of [parts, sameParts]) {
      expect(multipart.type).toBe('multipart/mixed; boundary="-"; deferSpec=20220824');
      expect(multipart.payloads.length).toBeGreaterThan(1);
    }
    expect(json.type).toMatch(/^application\/json/);
    expect(json.payloads).toEqual([{ data: merged(parts.payloads).data }]);
    expect(merged(sameParts.payloads)).toEqual(merged(parts.payloads));
    // The JSON request never joined a multipart one: at most the second multipart request was collapsed.
    expect(await collapsed() - before).toBeLessThanOrEqual(1);
  });

  it('answers GET /graphql in parts too, and honours @defer(if: false) with one ordinary answer', async () => {
    const query = 'query Deferrable($id: ID!, $wkt: WKT!, $later: Boolean!) { user(userId: $id) { userId } ... @defer(if: $later) { riskIndex(wkt: $wkt) { riskInfo { index } } } }';
    const deferred = await ask(query, { id: USER_ID, wkt: LOOP, later: true }, { method: 'GET' });
    expect(deferred.type).toMatch(/^multipart\/mixed/);
    expect(deferred.payloads.map((p) => p.hasNext)).toEqual([true, false]);
    const inline = await ask(query, { id: USER_ID, wkt: LOOP, later: false });
    expect(inline.type).toMatch(/^application\/graphql-response\+json/);
    expect(inline.payloads).toEqual([{ data: { user: { userId: USER_ID }, riskIndex: { riskInfo: { index: expect.any(Number) } } } }]);
    expect(merged(deferred.payloads).data).toEqual(inline.payloads[0]!.data);
  });

  it('keeps a failing subgraph\'s errors in its own fragment, whose null stops at the fragment; the other parts are whole', async () => {
    const query = `query Partly($id: ID!, $wkt: WKT!) {
      user(userId: $id) { userId }
      ... @defer(label: "files") { providerFiles(filter: { fileType: "x" }) { contentId } }
      ... @defer(label: "risk") { riskIndex(wkt: $wkt) { riskInfo { index } } }
    }`;
    const { payloads } = await ask(query, { id: USER_ID, wkt: LOOP });
    expect(payloads[0]).toEqual({ data: { user: { userId: USER_ID } }, hasNext: true });
    const items = payloads.flatMap((p) => p.incremental ?? []);
    const files = items.find((i) => i.label === 'files')!;
    expect(files.data).toBeNull();
    expect(files.errors?.map((e) => (e.extensions as Json).code)).toContain('SERVICE_UNAVAILABLE');
    expect(items.find((i) => i.label === 'risk')).toEqual({ label: 'risk', path: [], data: { riskIndex: { riskInfo: { index: expect.any(Number) } } } });
    expect(payloads.at(-1)!.hasNext).toBe(false);
  });

  it('refuses @defer in a mutation, and more than GRAPHQL_MAX_DEFERRED fragments (one in a list counting once per item), with 400 BAD_REQUEST', async () => {
    const mutation = await t.request('POST', '/graphql', { body: { query: 'mutation { ... @defer { createUser(input: { homeZip: "60601" }) { userId } } }' } });
    expect(mutation.status).toBe(400);
    expect(mutation.body).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST', operationType: 'mutation' }, message: expect.stringMatching(/in a mutation/) }] });

    const inList = (first: number) => `query { user(userId: "${USER_ID}") { bookings(first: ${first}) { nodes { bookingId ... @defer { vehicle { vin } } } } } }`;
    const over = await t.request('POST', '/graphql', { body: { query: inList(17) }, headers: { accept: MULTIPART } });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({ errors: [{ extensions: { code: 'BAD_REQUEST', deferred: 17, maxDeferred: 16 }, message: expect.stringMatching(/GRAPHQL_MAX_DEFERRED/) }] });
    expect((await ask(inList(16))).payloads.at(-1)!.hasNext).toBe(false);
  });

  it('ends the answer with RESPONSE_TOO_LARGE and hasNext: false once the parts pass GRAPHQL_MAX_RESPONSE_OBJECTS', async () => {
    const query = `query Fars($wkt: WKT!) {
      user(userId: "${USER_ID}") { userId }
      ... @defer(label: "a") { a: riskIndex(wkt: $wkt, radius: 0.05) { farsInfo(limit: 60) { records { ST_CASE } } } }
      ... @defer(label: "b") { b: riskIndex(wkt: $wkt, radius: 0.05) { farsInfo(limit: 60) { records { ST_CASE } } } }
    }`;
    const { status, payloads } = await ask(query, { wkt: LOOP });
    expect(status).toBe(200);
    expect(payloads[0]).toMatchObject({ data: { user: { userId: USER_ID } }, hasNext: true });
    expect(payloads.at(-1)).toEqual({ errors: [{ message: expect.stringMatching(/more than 100 objects/), extensions: { code: 'RESPONSE_TOO_LARGE', maxObjects: 100 } }], hasNext: false });
  });
});

describe('Accept: which requests get an incremental answer', () => {
  it('parses media ranges with their parameters and q-values', () => {
    expect(acceptsIncremental(MULTIPART)).toBe(true);
    expect(acceptsIncremental('application/json, multipart/mixed')).toBe(true);
    expect(acceptsIncremental('multipart/mixed; deferSpec="20220824"; q=0.5, application/json')).toBe(false);
    expect(acceptsIncremental('multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json;q=0.9')).toBe(false);
    expect(acceptsIncremental('multipart/mixed; incrementalSpec=v0.2')).toBe(false);
    expect(acceptsIncremental('multipart/mixed;q=0')).toBe(false);
    expect(acceptsIncremental('*/*')).toBe(false);
    expect(acceptsIncremental(undefined)).toBe(false);
  });
});
