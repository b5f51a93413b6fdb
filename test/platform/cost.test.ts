import { createRequire } from 'node:module';
import type * as GraphQL from 'graphql';
import { describe, expect, it } from 'vitest';
import { costDirectivesOf } from '../../subgraphs/platform/cost/directives.ts';
import { MUTATION_COST, operationCost } from '../../subgraphs/platform/cost/estimate.ts';
import { holdsMoreObjectsThan } from '../../subgraphs/platform/cost/response-size.ts';
import { demandControlPlugin } from '../../subgraphs/platform/cost/plugin.ts';

// Apollo Server builds schemas with graphql's CommonJS build; the estimate works on those.
const { buildSchema, getVariableValues, parse, Kind } = createRequire(import.meta.url)('graphql') as typeof GraphQL;

const SDL = `
directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
directive @cost(weight: Int!) on FIELD_DEFINITION | OBJECT
type Query {
  bookings(first: Int = 20, after: String): BookingConnection! @listSize(slicingArguments: ["first"], sizedFields: ["nodes"], requireOneSlicingArgument: false)
  tags: [String!]! @listSize(assumedSize: 50)
  cells: [Cell!]! @listSize(assumedSize: 10)
  report(limit: Int = 100): Report! @listSize(slicingArguments: ["limit"], sizedFields: ["records"], requireOneSlicingArgument: false)
  expensive: Cell! @cost(weight: 40)
}
type Mutation { createVehicle(vin: String!): Vehicle! }
type BookingConnection { nodes: [Booking!]! @listSize(assumedSize: 100) pageInfo: PageInfo! }
type PageInfo { hasNextPage: Boolean! }
type Booking { id: ID! vehicle: Vehicle! }
type Vehicle {
  vin: String!
  bookings(first: Int = 20): BookingConnection! @listSize(slicingArguments: ["first"], sizedFields: ["nodes"], requireOneSlicingArgument: false)
}
type Cell { id: ID! }
type Report { records: [Cell!]! @listSize(assumedSize: 1000) }
`;
const sdl = parse(SDL);
const schema = buildSchema(SDL);
const directives = costDirectivesOf(sdl);

function cost(query: string, variables: Record<string, unknown> = {}) {
  const document = parse(query);
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)!;
  const fragments = Object.fromEntries(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d]] : [])));
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
  if (coerced.errors) throw coerced.errors[0];
  return operationCost({ schema, operation, fragments, variables: coerced.coerced, directives });
}

describe('operation cost (@listSize, variables resolved)', () => {
  it('counts an omitted page size as the schema default, multiplied through nesting', () => {
    // 1 connection + 20 x (booking 1 + vehicle 1 + connection 1 + 20 x booking 1) + pageInfo 1
    expect(cost('{ bookings { pageInfo { hasNextPage } nodes { id vehicle { bookings { nodes { id } } } } } }')).toBe(1 + 1 + 20 * (1 + 1 + 1 + 20));
  });

  it('counts `first: $n` as n, and a literal as itself', () => {
    expect(cost('query Q($n: Int) { bookings(first: $n) { nodes { id } } }', { n: 5000 })).toBe(1 + 5000);
    expect(cost('query Q($n: Int) { bookings(first: $n) { nodes { id } } }')).toBe(1 + 20);
    expect(cost('{ bookings(first: 3) { nodes { id } } }')).toBe(1 + 3);
    expect(cost('{ bookings(first: -1000) { nodes { id } } }')).toBe(1);
  });

  it('counts each alias, follows fragments and honours @skip/@include', () => {
    const one = cost('{ bookings { nodes { id } } }');
    expect(cost('{ a: bookings { nodes { id } } b: bookings { nodes { id } } }')).toBe(2 * one);
    expect(cost('{ bookings { ...Page } } fragment Page on BookingConnection { nodes { ...B } } fragment B on Booking { vehicle { vin } }')).toBe(1 + 20 * 2);
    expect(cost('query Q($no: Boolean!) { bookings @include(if: $no) { nodes { id } } }', { no: false })).toBe(0);
  });

  it('uses assumedSize for lists without a page argument, sizes a parent\'s sizedFields by its slicing argument, and weighs @cost', () => {
    expect(cost('{ cells { id } tags }')).toBe(10);
    expect(cost('{ report { records { id } } }')).toBe(1 + 100);
    expect(cost('{ report(limit: 7) { records { id } } }')).toBe(1 + 7);
    expect(cost('{ expensive { id } }')).toBe(40);
  });

  it('adds the base cost of a mutation', () => {
    expect(cost('mutation { createVehicle(vin: "x") { vin bookings { nodes { id } } } }')).toBe(MUTATION_COST + 1 + 1 + 20);
  });

  it('counts a document of fragments spread into fragments in linear time', () => {
    const levels = 40;
    const fragments = Array.from({ length: levels }, (_, i) => `fragment F${i} on Booking { ${i + 1 < levels ? `...F${i + 1} ...F${i + 1}` : 'vehicle { vin }'} }`).join('\n');
    expect(cost(`{ bookings(first: 1) { nodes { ...F0 } } } ${fragments}`)).toBe(1 + 2 ** (levels - 1) + 1);
  });
});

describe('answer size', () => {
  it('counts objects at any depth and stops past the limit', () => {
    const answer = { bookings: { nodes: Array.from({ length: 10 }, (_, i) => ({ id: String(i), vehicle: { vin: 'v' } })) } };
    // data + connection + 10 bookings + 10 vehicles
    expect(holdsMoreObjectsThan(answer, 22)).toBe(false);
    expect(holdsMoreObjectsThan(answer, 21)).toBe(true);
    expect(holdsMoreObjectsThan(null, 0)).toBe(false);
  });
});

describe('demand control plugin', () => {
  /** Runs the plugin's check on `query` once per variables object; returns how many field lookups the estimates made, and the refusals. */
  async function check(query: string, ...requests: Record<string, unknown>[]) {
    let lookups = 0;
    const counted = { ...directives, fieldWeights: { get: (key: string) => { lookups += 1; return directives.fieldWeights.get(key); } } as ReadonlyMap<string, number> };
    const plugin = demandControlPlugin(counted, { maxCost: 1000, maxResponseObjects: 1000 });
    const document = parse(query);
    const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)!;
    const refused: string[] = [];
    for (const variables of requests) {
      const listener = await plugin.requestDidStart!({} as never);
      await (listener as { didResolveOperation(c: unknown): Promise<void> }).didResolveOperation({ schema, document, operation, request: { variables } })
        .catch((error: GraphQL.GraphQLError) => { refused.push(String(error.extensions.code)); });
    }
    return { lookups, refused };
  }

  it('estimates a repeated document whose cost reads no variable once, and one whose cost reads a variable every time', async () => {
    const once = await check('query Q($id: String!) { bookings(first: 5) { nodes { id vehicle { vin } } } tags @skip(if: false) }', { id: 'a' }, { id: 'b' }, { id: 'c' });
    expect(once.refused).toEqual([]);
    const single = await check('query Q($id: String!) { bookings(first: 5) { nodes { id vehicle { vin } } } tags @skip(if: false) }', { id: 'a' });
    expect(once.lookups).toBe(single.lookups);
    const paged = await check('query Q($n: Int) { bookings(first: $n) { nodes { id } } }', { n: 5 }, { n: 5000 }, { n: 5 });
    expect(paged.refused).toEqual(['COST_LIMIT_EXCEEDED']);
    const skipped = await check('query Q($s: Boolean!) { report(limit: 5000) @skip(if: $s) { records { id } } }', { s: true }, { s: false });
    expect(skipped.refused).toEqual(['COST_LIMIT_EXCEEDED']);
  });
});
