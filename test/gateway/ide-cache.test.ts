/**
 * The IDE examples are what frontend teams copy: each selects the `id` of every entity it reads, so
 * Apollo Client's InMemoryCache (given schema/possible-types.json) normalises it, and writing every
 * example's answer into one cache, as tabs run one after another, raises no cache warning.
 * Answers are generated from the API schema (every field, list and union member filled in).
 */
import { readFileSync } from 'node:fs';
import { InMemoryCache, type NormalizedCacheObject } from '@apollo/client/cache';
import { loadDevMessages, loadErrorMessages } from '@apollo/client/dev';
import {
  execute, getNullableType, isEnumType, isListType, isObjectType, parse,
  type GraphQLOutputType, type GraphQLSchema, type OperationDefinitionNode,
} from 'graphql';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiSchema, servedExamples } from '../../gateway/ide/index.ts';
import { possibleTypesPath, supergraphPath } from '../../schema/subgraphs.ts';

const schema = apiSchema();
const possibleTypes = JSON.parse(readFileSync(possibleTypesPath, 'utf8')) as Record<string, string[]>;
const entityTypes = new Set([...readFileSync(supergraphPath, 'utf8').matchAll(/^type (\w+)\b[^{]*@join__type\([^)]*key:/gm)].map((m) => m[1]!));

/** A full answer to `query` from the schema alone: two items per list, every union member in turn, distinct ids. */
function mockAnswer(target: GraphQLSchema, query: ReturnType<typeof parse>, variables: Record<string, unknown>) {
  let n = 0;
  const mock = (type: GraphQLOutputType): unknown => {
    const nullable = getNullableType(type);
    if (isListType(nullable)) return [mock(nullable.ofType), mock(nullable.ofType)];
    if (isEnumType(nullable)) return nullable.getValues()[0]!.value;
    if (isObjectType(nullable) || !('serialize' in nullable)) return {};
    n += 1;
    return { Int: n, Float: n + 0.5, Boolean: true, EpochSeconds: 1_800_000_000 + n, Date: '2026-01-02', DateTime: '2026-01-02T03:04:05.000Z', JSON: {} }[nullable.name] ?? `${nullable.name.toLowerCase()}-${n}`;
  };
  let member = 0;
  const result = execute({
    schema: target, document: query, variableValues: variables,
    fieldResolver: (_source, _args, _context, info) => mock(info.returnType),
    typeResolver: (_value, _context, _info, abstract) => { const types = target.getPossibleTypes(abstract); return types[member++ % types.length]!.name; },
  }) as { data?: Record<string, unknown>; errors?: unknown[] };
  expect(result.errors).toBeUndefined();
  return result.data!;
}

/** Objects of an entity type stored inside another record instead of as their own record. */
function embeddedEntities(contents: NormalizedCacheObject): string[] {
  const found: string[] = [];
  const visit = (value: unknown, where: string) => {
    if (Array.isArray(value)) return value.forEach((item, i) => visit(item, `${where}.${i}`));
    if (!value || typeof value !== 'object' || '__ref' in value) return;
    const typename = (value as { __typename?: string }).__typename;
    if (typename && entityTypes.has(typename)) found.push(`${typename} at ${where}`);
    for (const [key, child] of Object.entries(value)) visit(child, `${where}.${key}`);
  };
  for (const [id, record] of Object.entries(contents)) for (const [field, value] of Object.entries(record ?? {})) visit(value, `${id}.${field}`);
  return found;
}

beforeAll(() => { loadDevMessages(); loadErrorMessages(); });
afterEach(() => { vi.restoreAllMocks(); });

describe('IDE examples in Apollo Client\'s InMemoryCache', () => {
  const examples = servedExamples(schema);

  it('knows the entity types', () => {
    expect([...entityTypes]).toEqual(expect.arrayContaining(['User', 'Vehicle', 'Booking', 'RescueRequest', 'RegisteredUser']));
  });

  it('normalises every entity each example reads, with no cache warning, in either order', () => {
    const warnings = [vi.spyOn(console, 'warn'), vi.spyOn(console, 'error')];
    for (const order of [examples, [...examples].reverse()]) {
      const cache = new InMemoryCache({ possibleTypes });
      for (const example of order) {
        const query = cache.transformDocument(parse(example.query));
        const operation = query.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition')!;
        const variables = example.variables ?? {};
        cache.write({ dataId: `ROOT_${operation.operation.toUpperCase()}`, query, variables, result: mockAnswer(schema, query, variables) });
      }
      expect(embeddedEntities(cache.extract())).toEqual([]);
    }
    expect(warnings.flatMap((spy) => spy.mock.calls.map((args) => args.map(String).join(' ')))).toEqual([]);
  });
});
