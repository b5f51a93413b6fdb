/**
 * Every entity type has an `id: ID!` (its type name and key) resolved by its owning subgraph, so a
 * client cache normalises it with no configuration; the possible types of every union and interface
 * are published in schema/possible-types.json.
 */
import { readFileSync } from 'node:fs';
import { isAbstractType, isNonNullType, isObjectType, parse, type ObjectTypeDefinitionNode } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiSchema } from '../../gateway/ide/index.ts';
import { entityIdResolvers } from '../../subgraphs/platform/entity-id.ts';
import { possibleTypesPath, supergraphPath } from '../../schema/subgraphs.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const supergraph = readFileSync(supergraphPath, 'utf8');
const entityTypes = parse(supergraph).definitions
  .filter((d): d is ObjectTypeDefinitionNode => d.kind === 'ObjectTypeDefinition')
  .filter((d) => d.directives?.some((dir) => dir.name.value === 'join__type' && dir.arguments?.some((a) => a.name.value === 'key')))
  .map((d) => d.name.value);

describe('entity ids in the schema', () => {
  it('gives every entity type of the API schema a non-null ID field `id`', () => {
    const schema = apiSchema();
    expect(entityTypes).toEqual(expect.arrayContaining(['User', 'Vehicle', 'Booking', 'RescueRequest', 'RegisteredUser', 'Consent']));
    for (const name of entityTypes) {
      const type = schema.getType(name);
      if (!isObjectType(type)) continue; // an entity only some subgraph's internals use is not in the API schema
      const id = type.getFields().id;
      expect(id, name).toBeDefined();
      expect(isNonNullType(id!.type) && String(id!.type.ofType), name).toBe('ID');
    }
  });

  it('builds the id from the type name and the key fields', () => {
    const resolvers = entityIdResolvers(parse(`
      type Vehicle @key(fields: "vin") { id: ID! vin: String! }
      type Pair @key(fields: "org  code") { id: ID! org: String! code: String! }
      type NoKey { id: ID! }
      type KeyWithoutId @key(fields: "k") { k: ID! }`));
    expect(Object.keys(resolvers)).toEqual(['Vehicle', 'Pair']);
    expect(resolvers.Vehicle!.id({ vin: '1HGCM82633A004352' })).toBe('Vehicle:1HGCM82633A004352');
    expect(resolvers.Pair!.id({ org: 'a', code: 'b' })).toBe('Pair:a:b');
  });

  it('publishes the possible types of every union and interface', () => {
    const schema = apiSchema();
    const expected = Object.fromEntries(Object.values(schema.getTypeMap())
      .filter((t) => isAbstractType(t) && !t.name.startsWith('__'))
      .map((t) => [t.name, schema.getPossibleTypes(t as Parameters<typeof schema.getPossibleTypes>[0]).map((o) => o.name).sort()]));
    expect(JSON.parse(readFileSync(possibleTypesPath, 'utf8'))).toEqual(expected);
    expect(expected.PrequalCoverageScoreResult).toEqual(['MissingUserData', 'PrequalCoverageScore']);
  });
});

describe('entity ids over the gateway', () => {
  let t: TestStack;
  beforeAll(async () => { t = await startTestStack({ subgraphs: ['booking', 'scoring', 'registration'] }); });
  afterAll(async () => { await t?.close(); });

  it('resolves the ids of a user, their bookings and vehicles, across subgraphs', async () => {
    const vin = '1HGCM82633A0E1D01';
    await t.graphql('mutation { createUser(input: { userId: "ids-1", homeZip: "60601" }) { userId } }');
    await t.graphql(`mutation { createVehicle(vin: "${vin}", deviceId: "dev-ids-1") { vin } }`);
    await t.graphql(`mutation { startBooking(input: { vin: "${vin}", bookingId: "bk-ids-1", userId: "ids-1", startTimestamp: 1800000000 }) { bookingId } }`);
    const res = await t.graphql('{ user(userId: "ids-1") { id bookings { nodes { id vehicle { id } user { id } } } } booking(bookingId: "bk-ids-1") { id } }');
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({
      user: { id: 'User:ids-1', bookings: { nodes: [{ id: 'Booking:bk-ids-1', vehicle: { id: `Vehicle:${vin}` }, user: { id: 'User:ids-1' } }] } },
      booking: { id: 'Booking:bk-ids-1' },
    });
  });

  it('resolves the ids of registration entities, whose keys are their own ids', async () => {
    await t.graphql('mutation { registerUser(input: { userId: "ids-reg" }) { userId } }');
    const assigned = await t.graphql('mutation { assignRegisteredDevice(deviceId: "ids-dev", userId: "ids-reg", input: { effectiveDate: "2026-01-01", type: OBD }) { id user { id } } }');
    expect(assigned.errors).toBeUndefined();
    expect(assigned.data).toEqual({ assignRegisteredDevice: { id: 'RegisteredDevice:ids-dev', user: { id: 'RegisteredUser:ids-reg' } } });
  });
});
