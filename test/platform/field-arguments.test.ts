import { createRequire } from 'node:module';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import type * as GraphQL from 'graphql';
import { describe, expect, it } from 'vitest';
import '../../subgraphs/platform/field-arguments.ts';

// The CommonJS graphql the subgraphs execute with (gateway/datasources.ts).
const { buildSchema, execute, parse } = createRequire(import.meta.url)('graphql') as typeof GraphQL;

const schema = buildSchema(`
type Query { plain: String page(first: Int = 10, after: String, tags: [String!]!): String }
`);

/** Runs `query`, each field answering with what its resolver was given as arguments. */
async function argumentsOf(query: string, variableValues?: Record<string, unknown>) {
  const seen: Record<string, Record<string, unknown>> = {};
  const result = await execute({
    schema, document: parse(query), variableValues,
    fieldResolver: (_source, args: Record<string, unknown>, _context, info) => {
      seen[info.path.key] = args;
      return 'x';
    },
  });
  return { result, seen };
}

v8.setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Bytes of heap that executing a list of 500 objects of 8 fields allocates per field (no collection meanwhile). */
async function bytesPerField(sdl: string, selection: string) {
  const items = Array.from({ length: 500 }, (_, i) => Object.fromEntries(Array.from({ length: 8 }, (_, k) => [`f${k}`, i])));
  const run = { schema: buildSchema(sdl), document: parse(`{ items { ${selection} } }`), rootValue: { items } };
  await execute(run);
  gc();
  const before = v8.getHeapStatistics().used_heap_size;
  await execute(run);
  return (v8.getHeapStatistics().used_heap_size - before) / 4000;
}

describe('field arguments', () => {
  it('a field without arguments allocates hundreds of bytes less than one with an (unused) argument', async () => {
    const fields = Array.from({ length: 8 }, (_, k) => `f${k}`);
    const without = await bytesPerField(`type Query { items: [Item] } type Item { ${fields.map((f) => `${f}: Int`).join(' ')} }`, fields.join(' '));
    const withOne = await bytesPerField(`type Query { items: [Item] } type Item { ${fields.map((f) => `${f}(x: Int): Int`).join(' ')} }`, fields.join(' '));
    expect(without).toBeGreaterThan(0);
    // 1,291 bytes a field either way without the replacement; 615 and 1,329 with it (Node 24).
    expect(withOne - without).toBeGreaterThan(300);
  });

  it('a field without arguments gets an empty plain object of its own', async () => {
    const { result, seen } = await argumentsOf('{ plain a: plain }');
    expect(result).toEqual({ data: { plain: 'x', a: 'x' } });
    for (const args of [seen.plain, seen.a]) {
      expect(args).toEqual({});
      expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    }
    // One object per field: what a resolver does to its arguments stays its own.
    expect(seen.plain).not.toBe(seen.a);
  });

  it('a field with arguments gets them coerced as graphql-js does: defaults, variables, lists', async () => {
    const { result, seen } = await argumentsOf('query($after: String) { page(after: $after, tags: "solo") }', { after: 'c1' });
    expect(result.errors).toBeUndefined();
    expect({ ...seen.page }).toEqual({ first: 10, after: 'c1', tags: ['solo'] });
  });

  it('a required argument left out through a variable is still refused', async () => {
    const { result } = await argumentsOf('query($tags: [String!]) { page(tags: $tags) }', {});
    expect(result.data).toEqual({ page: null });
    expect(result.errors?.[0]?.message).toBe('Argument "tags" of required type "[String!]!" was provided the variable "$tags" which was not provided a runtime value.');
  });
});
