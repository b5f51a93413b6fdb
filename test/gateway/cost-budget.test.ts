import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Supergraph } from '@apollo/federation-internals';
import type * as GraphQL from 'graphql';
import type { DocumentNode, TypeNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { costDirectivesOf } from '../../subgraphs/platform/cost/directives.ts';
import { operationCost } from '../../subgraphs/platform/cost/estimate.ts';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { readSupergraphSdl } from '../../gateway/supergraph.ts';
import { restRoutes } from '../../gateway/rest/index.ts';
import { ideExamples } from '../../gateway/ide/examples.ts';
import { subgraphList } from '../../schema/subgraphs.ts';

// The CommonJS graphql, as Apollo Server uses it (federation-internals hands back its schema too).
const { Kind, parse } = createRequire(import.meta.url)('graphql') as typeof GraphQL;

const supergraphSdl = readSupergraphSdl();
const schema = Supergraph.build(supergraphSdl).apiSchema().toGraphQLJSSchema();
const directives = costDirectivesOf(parse(supergraphSdl));
const { GRAPHQL_MAX_COST } = loadConfig({});

/** Cost with the given variables; a required variable left out gets a placeholder (only list sizes read values). */
function costOf(query: string, given: Record<string, unknown> = {}) {
  const document: DocumentNode = parse(query);
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION)!;
  const variables: Record<string, unknown> = { ...given };
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (!(name in variables) && definition.type.kind === Kind.NON_NULL_TYPE) variables[name] = 'placeholder';
  }
  const fragments = Object.fromEntries(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d]] : [])));
  return operationCost({ schema, operation, fragments, variables, directives });
}

const isList = (type: TypeNode): boolean => type.kind === Kind.LIST_TYPE || (type.kind === Kind.NON_NULL_TYPE && isList(type.type));

describe('cost annotations and budget', () => {
  it('annotates every list field of every subgraph SDL with @listSize, and every connection with a slicing argument', () => {
    const missing: string[] = [];
    for (const subgraph of subgraphList()) {
      const sdl = parse(readFileSync(subgraph.schemaPath, 'utf8'));
      for (const definition of sdl.definitions) {
        if (definition.kind !== Kind.OBJECT_TYPE_DEFINITION && definition.kind !== Kind.INTERFACE_TYPE_DEFINITION) continue;
        for (const field of definition.fields ?? []) {
          const listSize = field.directives?.find((d) => d.name.value === 'listSize');
          const typeName = JSON.stringify(field.type).match(/"value":"(\w+)"/)?.[1] ?? '';
          const connection = typeName.endsWith('Connection');
          const slicing = listSize?.arguments?.some((a) => a.name.value === 'slicingArguments');
          if ((isList(field.type) && !listSize) || (connection && !slicing)) missing.push(`${subgraph.name}: ${definition.name.value}.${field.name.value}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('keeps every REST row under GRAPHQL_MAX_COST with its default variables', () => {
    const costs = restRoutes.map((route) => ({ route: `${route.method} ${route.path}`, cost: costOf(route.operation) }));
    expect(costs.filter((c) => c.cost > GRAPHQL_MAX_COST)).toEqual([]);
    // The list rows are counted at their default page size, not as 1.
    const list = costs.find((c) => c.route === 'GET /shared-mobility-insights/v2/bookings')!;
    expect(list.cost).toBeGreaterThanOrEqual(20);
  });

  it('keeps every IDE example under GRAPHQL_MAX_COST with its example variables', () => {
    const over = ideExamples.map((example) => ({ query: example.query, cost: costOf(example.query, example.variables) })).filter((c) => c.cost > GRAPHQL_MAX_COST);
    expect(over).toEqual([]);
  });
});
