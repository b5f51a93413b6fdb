import { createRequire } from 'node:module';
import { operationFromDocument, Supergraph, type Operation } from '@apollo/federation-internals';
import { parse } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeResponse } from '../../gateway/query-plan-executor/shaping.ts';
import { readSupergraphSdl } from '../../gateway/supergraph.ts';
import { inBackground } from '../../subgraphs/platform/lanes.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

type Shape = (input: { operation: Operation; variables: Record<string, unknown>; input: Record<string, unknown>; introspectionHandling: () => null }) => { data: unknown; errors: { message: string; path?: unknown }[] };
const upstream = (createRequire(import.meta.url)('@apollo/gateway/dist/resultShaping.js') as { computeResponse: Shape }).computeResponse;

const api = Supergraph.build(readSupergraphSdl()).apiSchema();
const NODE = 'nodes { bookingId vin status startTimestamp actualEndTimestamp }';
const ALIASES = 19;
const operation = operationFromDocument(api, parse(`query($id: ID!) { user(userId: $id) { ${
  Array.from({ length: ALIASES }, (_, i) => `a${i}: bookings(first: 100) { ${NODE} }`).join(' ')} } }`));
const node = (i: number) => ({ bookingId: `b${i}`, vin: '1HGCM82633A004352', status: 'ENDED', startTimestamp: 1767225600 + i, actualEndTimestamp: null });
/** What the subgraphs' answers hold: 19 pages of `size` bookings; `broken` (page, index) lacks its non-null bookingId. */
function fetched(broken?: [number, number], size = 100) {
  const pages = Array.from({ length: ALIASES }, (_, a) => [`a${a}`, {
    nodes: Array.from({ length: size }, (_, i) => (broken?.[0] === a && broken[1] === i ? { ...node(i), bookingId: null } : node(i))),
  }]);
  return { user: Object.fromEntries(pages) };
}
const shapeOf = (input: Record<string, unknown>) => ({ operation, variables: { id: 'u1' }, input, introspectionHandling: () => null });
const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('shaping an answer (the fork of resultShaping)', () => {
  it('answers as upstream does, with null propagation and its error, whichever lane shapes it', async () => {
    for (const input of [fetched(), fetched([7, 42])]) {
      const expected = upstream(shapeOf(input));
      const foreground = await computeResponse(shapeOf(input));
      const background = await inBackground(() => computeResponse(shapeOf(input)));
      for (const shaped of [foreground, background]) {
        expect(plain(shaped.data)).toEqual(plain(expected.data));
        expect(shaped.errors.map((e) => [e.message, e.path])).toEqual(expected.errors.map((e) => [e.message, e.path]));
      }
    }
    expect(upstream(shapeOf(fetched([7, 42]))).errors).toHaveLength(1);
  });

  it('answers rows with a bad leaf, a __typename or a condition as upstream does', async () => {
    const conditional = operationFromDocument(api, parse(`query($id: ID!, $vin: Boolean!) { user(userId: $id) {
      a: bookings(first: 3) { nodes { bookingId vin @include(if: $vin) status } }
      b: bookings(first: 3) { nodes { __typename bookingId status bookingId } } } }`));
    const rows = [node(0), { ...node(1), status: 'NOT_A_STATUS', __typename: 'Booking' }, { ...node(2), status: 7 }];
    const input = { user: { a: { nodes: rows }, b: { nodes: rows } } };
    for (const vin of [true, false]) {
      const shape = { operation: conditional, variables: { id: 'u1', vin }, input, introspectionHandling: () => null };
      const [shaped, expected] = [await inBackground(() => computeResponse(shape)), upstream(shape)];
      expect(JSON.stringify(shaped.data)).toBe(JSON.stringify(expected.data));
      expect(shaped.errors.map((e) => [e.message, e.path])).toEqual(expected.errors.map((e) => [e.message, e.path]));
      expect(shaped.errors.length).toBeGreaterThan(0);
    }
  });

  it('gives the event loop back between slices in the background lane, and runs through in one piece otherwise', async () => {
    // 19,000 objects: tens of ms, many slices on any machine.
    const input = fetched(undefined, 1000);
    const turnsWhile = async (shape: () => Promise<unknown>) => {
      let turns = 0;
      let shaping = true;
      const probe = () => setImmediate(() => { if (!shaping) return; turns += 1; probe(); });
      probe();
      await shape();
      shaping = false;
      return turns;
    };
    const background = await turnsWhile(() => inBackground(() => computeResponse(shapeOf(input))));
    const foreground = await turnsWhile(() => computeResponse(shapeOf(input)));
    expect(background).toBeGreaterThanOrEqual(3);
    expect(foreground).toBe(0);
  });

  it('holds aliases named as Object.prototype members as its own fields, as upstream does', async () => {
    const names = ['__proto__', 'toString', 'constructor', 'hasOwnProperty'];
    const query = `query($id: ID!) { user(userId: $id) { ${names.map((n) => `${n}: bookings(first: 1) { nodes { ${n}: bookingId status } }`).join(' ')} } }`;
    const named = operationFromDocument(api, parse(query));
    // JSON.parse, as a subgraph's answer is read: `__proto__` an own property.
    const input = JSON.parse(`{"user": {${names.map((n) => `"${n}": {"nodes": [{"${n}": "b-${n}", "status": "ENDED"}]}`).join(', ')}}}`) as Record<string, unknown>;
    const shape = { operation: named, variables: { id: 'u1' }, input, introspectionHandling: () => null };
    const shaped = await computeResponse(shape);
    const user = (shaped.data as { user: Record<string, { nodes: Record<string, unknown>[] }> }).user;
    expect(Object.getPrototypeOf(user)).toBe(Object.prototype);
    expect(Object.keys(user)).toEqual(names);
    for (const n of names) expect(JSON.stringify(Object.getOwnPropertyDescriptor(user, n)?.value)).toBe(`{"nodes":[{"${n}":"b-${n}","status":"ENDED"}]}`);
    expect(JSON.stringify(shaped.data)).toBe(JSON.stringify(upstream(shape).data));
    expect(shaped.errors).toEqual([]);
  });
});

describe('aliases named as Object.prototype members over the gateway', () => {
  let t: TestStack;
  beforeAll(async () => { t = await startTestStack({ subgraphs: ['booking', 'scoring'] }); });
  afterAll(async () => { await t?.close(); });

  it('answers them as fields, in the order asked', async () => {
    await t.graphql('mutation { createUser(input: { userId: "proto-1", homeZip: "60601" }) { userId } }');
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST', headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ user(userId: "proto-1") { __proto__: userId toString: userId constructor: id } }' }),
    });
    expect(res.status).toBe(200);
    expect((await res.text()).trimEnd()).toBe('{"data":{"user":{"__proto__":"proto-1","toString":"proto-1","constructor":"User:proto-1"}}}');
  });
});
