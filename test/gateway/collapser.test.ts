import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { Collapser, OperationTypes, WriteEpochs } from '../../gateway/collapse/collapser.ts';
import { requestCollapsing } from '../../gateway/collapse/requests.ts';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';

/** A promise and its resolve/reject, to hold work until the test lets it end. */
function held<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => { resolve = res; reject = rej; });
  return { promise, resolve, reject };
}

describe('Collapser', () => {
  it('runs identical in-flight work once, hands every caller the same answer, and runs again once it settled', async () => {
    const collapser = new Collapser();
    const gate = held<string>();
    let runs = 0;
    const work = () => { runs += 1; return gate.promise; };
    const calls = Array.from({ length: 5 }, () => collapser.run('k', work));
    const other = collapser.run('other', async () => 'other answer');
    expect(calls.map((c) => c.shared)).toEqual([false, true, true, true, true]);
    expect(other.shared).toBe(false);
    gate.resolve('the answer');
    expect(await Promise.all(calls.map((c) => c.answer))).toEqual(Array(5).fill('the answer'));
    expect(await other.answer).toBe('other answer');
    expect(runs).toBe(1);
    expect(collapser.size).toBe(0);
    const again = collapser.run('k', async () => 'later');
    expect(again.shared).toBe(false);
    expect(await again.answer).toBe('later');
  });

  it("fails every follower with the leader's exception (none hangs) and forgets the key", async () => {
    const collapser = new Collapser();
    const gate = held<string>();
    const calls = Array.from({ length: 4 }, () => collapser.run('k', () => gate.promise));
    const failure = new Error('subgraph exploded');
    // The leader's work starts on the next turn: reject only once it holds the promise, as a real failure would.
    await new Promise((resolve) => { setImmediate(resolve); });
    gate.reject(failure);
    const outcomes = await Promise.allSettled(calls.map((c) => c.answer));
    expect(outcomes).toEqual(Array(4).fill({ status: 'rejected', reason: failure }));
    expect(collapser.size).toBe(0);
    expect(await collapser.run('k', async () => 'recovered').answer).toBe('recovered');
  });
});

describe('WriteEpochs', () => {
  it('counts writes per organisation', () => {
    const epochs = new WriteEpochs();
    epochs.bump('org-a');
    epochs.bump('org-a');
    expect([epochs.of('org-a'), epochs.of('org-b'), epochs.of(undefined)]).toEqual([2, 0, 0]);
  });
});

describe('OperationTypes', () => {
  const types = new OperationTypes({ maxTokens: 1000 });
  it('tells the chosen operation of a document, null when none can be chosen or it does not parse', () => {
    expect(types.of('{ a }', undefined)).toBe('query');
    expect(types.of('mutation M { a }', undefined)).toBe('mutation');
    expect(types.of('query Q { a } mutation M { a }', 'M')).toBe('mutation');
    expect(types.of('query Q { a } mutation M { a }', 'Q')).toBe('query');
    expect(types.of('query Q { a } mutation M { a }', undefined)).toBeNull();
    expect(types.of('query Q { a }', 'Other')).toBeNull();
    expect(types.of('subscription S { a }', undefined)).toBe('subscription');
    expect(types.of('{ a', undefined)).toBeNull();
  });
});

describe('requestCollapsing keys', () => {
  const A: Caller = { clientId: 'client-a', orgId: 'org-a', scopes: ['b2b', 'roadside'] };
  const registered = new Map([['abc123', '{ known }']]);
  const collapsing = requestCollapsing({ parseOptions: { maxTokens: 1000 }, documentByHash: async (hash) => registered.get(hash), count: () => undefined });
  const post = (body: unknown, caller: Caller | null = A, headers: Record<string, string> = {}) =>
    ({ method: 'POST', body, headers: { accept: 'application/json', 'content-type': 'application/json', ...headers }, caller }) as unknown as FastifyRequest;
  const query = { query: 'query Q($id: ID!) { user(userId: $id) { userId } }', variables: { id: 'u1', other: [1, 2] } };

  it('is the same for the same operation, variables in any key order, caller and negotiated headers; request ids and traces are not part of it', async () => {
    const key = await collapsing.graphqlKey(post(query));
    expect(key).toEqual(expect.any(String));
    expect(await collapsing.graphqlKey(post({ variables: { other: [1, 2], id: 'u1' }, query: query.query }, { ...A, scopes: ['roadside', 'b2b'] }, { 'x-request-id': 'r2', traceparent: '00-abc-def-01' }))).toBe(key);
  });

  it('differs by client, organisation, scopes, variables, accept header and method', async () => {
    const key = await collapsing.graphqlKey(post(query));
    const others = await Promise.all([
      collapsing.graphqlKey(post(query, { ...A, clientId: 'client-b' })),
      collapsing.graphqlKey(post(query, { ...A, orgId: 'org-b' })),
      collapsing.graphqlKey(post(query, { ...A, scopes: ['b2b'] })),
      collapsing.graphqlKey(post(query, null)),
      collapsing.graphqlKey(post({ ...query, variables: { id: 'u2', other: [1, 2] } })),
      collapsing.graphqlKey(post(query, A, { accept: 'application/graphql-response+json' })),
      collapsing.graphqlKey({ method: 'GET', query: { query: query.query, variables: JSON.stringify(query.variables) }, headers: { accept: 'application/json', 'content-type': 'application/json' }, caller: A } as unknown as FastifyRequest),
    ]);
    expect(new Set([key, ...others]).size).toBe(others.length + 1);
  });

  it('is none for a mutation, an Idempotency-Key, an unknown APQ hash or a document that does not parse; an APQ hash known to the server has one', async () => {
    expect(await collapsing.graphqlKey(post({ query: 'mutation { a }' }))).toBeNull();
    expect(await collapsing.graphqlKey(post(query, A, { 'idempotency-key': 'k1' }))).toBeNull();
    expect(await collapsing.graphqlKey(post({ extensions: { persistedQuery: { version: 1, sha256Hash: 'unknown' } } }))).toBeNull();
    expect(await collapsing.graphqlKey(post({ query: '{ broken' }))).toBeNull();
    expect(await collapsing.graphqlKey(post({ extensions: { persistedQuery: { version: 1, sha256Hash: 'abc123' } } }))).toEqual(expect.any(String));
    expect(collapsing.restKey('mutation { a }', {}, post({}))).toBeNull();
    expect(collapsing.restKey(query.query, query.variables, post({}, A, { 'idempotency-key': 'k1' }))).toBeNull();
  });

  it("changes after a mutation of the caller's organisation is answered, for that organisation only", async () => {
    const before = collapsing.restKey(query.query, query.variables, post({}));
    const otherOrg = collapsing.restKey(query.query, query.variables, post({}, { ...A, orgId: 'org-b' }));
    const hooks = await collapsing.plugin.requestDidStart!({ contextValue: { orgId: 'org-a' } } as never);
    await hooks!.willSendResponse!({ operation: { operation: 'mutation' }, contextValue: { orgId: 'org-a' } } as never);
    expect(collapsing.restKey(query.query, query.variables, post({}))).not.toBe(before);
    expect(collapsing.restKey(query.query, query.variables, post({}, { ...A, orgId: 'org-b' }))).toBe(otherOrg);
  });
});
