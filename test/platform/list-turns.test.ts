import { createRequire } from 'node:module';
import type * as GraphQL from 'graphql';
import { describe, expect, it } from 'vitest';
import { LIST_TURN_MIN, listTurns } from '../../subgraphs/platform/list-turns.ts';

const { buildSchema, execute, parse } = createRequire(import.meta.url)('graphql') as typeof GraphQL;

const SDL = `
type Query { items(n: Int!, tag: String!): [Item!]! later(n: Int!): [Item] page(n: Int!): Page! none: [Item] }
type Page { nodes: [Item!]! }
type Item { n: Int! }
`;

/** Completion order: `tag` when a list's first item completes, `turn` at each event-loop turn of the probe. */
let log: string[] = [];
const items = (count: number, tag = '') => Array.from({ length: count }, (_, i) => ({
  n: () => { if (i === 0 && tag) log.push(tag); return i; },
}));
// Every field has the default resolver: it calls these functions of the root value and the items.
const root = {
  items: ({ n, tag }: { n: number; tag: string }) => items(n, tag),
  later: async ({ n }: { n: number }) => items(n),
  page: ({ n }: { n: number }) => ({ nodes: items(n) }),
  none: () => null,
};
const run = (schema: GraphQL.GraphQLSchema, query: string) => execute({ schema, document: parse(query), rootValue: root });

describe('listTurns', () => {
  const wrapped = listTurns(buildSchema(SDL));

  it('completes two big lists on turns of their own, an event-loop turn between them', async () => {
    log = [];
    let probing = true;
    const probe = () => setImmediate(() => { log.push('turn'); if (probing) probe(); });
    probe();
    const result = await run(wrapped, `{ a: items(n: ${LIST_TURN_MIN}, tag: "a") { n } b: items(n: ${LIST_TURN_MIN}, tag: "b") { n } }`);
    probing = false;
    expect(result.errors).toBeUndefined();
    const [a, b] = [log.indexOf('a'), log.indexOf('b')];
    expect(a).toBeGreaterThan(-1);
    expect(b).toBeGreaterThan(a);
    expect(log.slice(a, b)).toContain('turn');
  });

  it('keeps a smaller list synchronous', () => {
    const result = run(wrapped, `{ items(n: ${LIST_TURN_MIN - 1}, tag: "c") { n } page(n: ${LIST_TURN_MIN - 1}) { nodes { n } } }`);
    expect(result).not.toBeInstanceOf(Promise);
    expect((result as GraphQL.ExecutionResult).data?.items).toHaveLength(LIST_TURN_MIN - 1);
  });

  it('waits a turn for a big list under the default resolver', () => {
    expect(run(wrapped, `{ page(n: ${LIST_TURN_MIN}) { nodes { n } } }`)).toBeInstanceOf(Promise);
  });

  it('answers what the unwrapped schema answers', async () => {
    const query = `{ items(n: 120, tag: "") { n } later(n: 60) { n } page(n: 75) { nodes { n } } none { n } small: later(n: 3) { n } }`;
    const [turned, plain] = await Promise.all([run(wrapped, query), run(buildSchema(SDL), query)]);
    expect(turned).toEqual(plain);
    expect(turned.errors).toBeUndefined();
  });
});
