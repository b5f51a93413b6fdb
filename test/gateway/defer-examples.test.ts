/**
 * Every IDE example that is a query, given deferred fragments, answers in parts whose merge (as Apollo Client's
 * Defer20220824Handler merges them) equals the answer to the same query without @defer. Two shapes: each root
 * field deferred on its own (parallel parts at the root), and each root field's selections deferred (parts at a
 * path, across subgraphs). Runs on PGlite, and on PostgreSQL with DATABASE_URL.
 */
import { Kind, parse, print, visit, type DirectiveNode, type FieldNode, type OperationDefinitionNode, type SelectionNode } from 'graphql';
import { meros } from 'meros/browser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiSchema, servedExamples } from '../../gateway/ide/index.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { merged, type Json, type Payload } from '../support/deferred-parts.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const typename: FieldNode = { kind: Kind.FIELD, name: { kind: Kind.NAME, value: '__typename' } };
const defer = (label: string): DirectiveNode => ({
  kind: Kind.DIRECTIVE, name: { kind: Kind.NAME, value: 'defer' },
  arguments: [{ kind: Kind.ARGUMENT, name: { kind: Kind.NAME, value: 'label' }, value: { kind: Kind.STRING, value: label } }],
});
/** Selections wrapped in an inline fragment, deferred or not (the undeferred query has the same shape). */
const fragment = (selections: readonly SelectionNode[], label: string | null): SelectionNode => ({
  kind: Kind.INLINE_FRAGMENT, directives: label === null ? [] : [defer(label)], selectionSet: { kind: Kind.SELECTION_SET, selections },
});

/** The example with each root field in a fragment of its own, or each root field's selections in one. */
function reshaped(query: string, shape: 'root' | 'nested', deferred: boolean) {
  return print(visit(parse(query), {
    OperationDefinition(operation: OperationDefinitionNode) {
      const selections = operation.selectionSet.selections.map((selection, i): SelectionNode => {
        if (shape === 'root') return fragment([selection], deferred ? `root-${i}` : null);
        if (selection.kind !== Kind.FIELD || !selection.selectionSet) return selection;
        return { ...selection, selectionSet: { kind: Kind.SELECTION_SET, selections: [typename, fragment(selection.selectionSet.selections, deferred ? `nested-${i}` : null)] } };
      });
      return { ...operation, selectionSet: { ...operation.selectionSet, selections: shape === 'root' ? [typename, ...selections] : selections } };
    },
  }));
}

/** The answer without the figures stamped with the time they were computed (`asOf` of a feed with no observations). */
const timeless = (data: unknown) => JSON.parse(JSON.stringify(data ?? null, (key, value: unknown) => (key === 'asOf' ? undefined : value))) as unknown;

const codes = (errors: Json[] | undefined) => (errors ?? []).map((e) => `${String((e.extensions as Json | undefined)?.code)} ${JSON.stringify(e.path)}`).sort();

describe('IDE examples with deferred fragments', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack();
    await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
  }, 240_000);
  afterAll(async () => { await t?.close(); });

  async function answer(query: string, variables: Json, accept: string) {
    const response = await fetch(`${t.url}/graphql`, {
      method: 'POST', body: JSON.stringify({ query, variables }),
      headers: { accept, authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    });
    const parts = await meros<Payload>(response);
    if (parts instanceof Response) return { parts: 1, ...(await parts.json() as Payload) };
    const payloads: Payload[] = [];
    for await (const { body } of parts) payloads.push(body);
    return { parts: payloads.length, ...merged(payloads) };
  }

  const queries = servedExamples(apiSchema()).filter((e) => parse(e.query).definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.operation === 'query'));

  it('covers the query examples', () => {
    expect(queries.length).toBeGreaterThan(5);
    expect(queries.some((e) => /@defer/.test(e.query))).toBe(true);
  });

  for (const shape of ['root', 'nested'] as const) {
    it(`merges to the undeferred answer, each ${shape === 'root' ? 'root field' : 'root field\'s selection set'} deferred`, async () => {
      let compared = 0;
      let incremental = 0;
      for (const example of queries) {
        const variables = example.variables ?? {};
        const deferred = await answer(reshaped(example.query, shape, true), variables, 'multipart/mixed;deferSpec=20220824,application/json;q=0.9');
        const plain = await answer(reshaped(example.query, shape, false).replace(/@defer(\([^)]*\))?/g, ''), variables, 'application/json');
        expect(plain.parts, example.query).toBe(1);
        // A fragment deferred inside a long list is over GRAPHQL_MAX_DEFERRED: refused before anything runs.
        if (deferred.errors?.some((e) => (e.extensions as Json | undefined)?.maxDeferred !== undefined)) continue;
        // A fragment the planner cannot fetch apart (inside a value of the same subgraph) may come in one answer.
        if (deferred.parts > 1) incremental += 1;
        expect(codes(deferred.errors), example.query).toEqual(codes(plain.errors));
        // A non-null field's error that nulls the whole undeferred answer stops at its fragment when deferred (the
        // defer proposal's rule): then only the errors compare (an example whose ids name nothing in this stack).
        if (plain.data === null && plain.errors?.length) continue;
        expect(timeless(deferred.data), example.query).toEqual(timeless(plain.data));
        compared += 1;
      }
      expect(compared).toBeGreaterThan(queries.length / 2);
      expect(incremental).toBeGreaterThan(queries.length / 2);
    }, 240_000);
  }
});
