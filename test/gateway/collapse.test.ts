import type { GraphQLFieldResolver, GraphQLObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type HttpResult, type TestStack } from '../support/stack.ts';

const USER = 'query CollapseUser($id: ID!) { user(userId: $id) { userId homeZip enrollmentStatus } }';
const UPDATE = 'mutation CollapseUpdate($id: ID!, $zip: ZipCode) { updateUser(userId: $id, input: { homeZip: $zip }, mode: MERGE) { userId homeZip } }';
const USER_ID = 'collapse-user';
const userPath = (id: string) => `/shared-mobility-insights/v2/users/${id}`;
const N = 6;

/**
 * Holds every call of a subgraph field's resolver until `open()`, counting the calls: the leader of
 * a collapsed group waits there, so its followers join deterministically, and the count is how many
 * requests really ran.
 */
function holdResolver(t: TestStack, type: string, field: string) {
  const scoring = t.stack.subgraphs.find((s) => s.name === 'scoring')!;
  const definition = (scoring.schema.getType(type) as GraphQLObjectType).getFields()[field]!;
  const original = definition.resolve!;
  let calls = 0;
  let failure: Error | undefined;
  let open!: () => void;
  const opened = new Promise<void>((resolve) => { open = resolve; });
  definition.resolve = (async (...args: Parameters<GraphQLFieldResolver<unknown, unknown>>) => {
    calls += 1;
    await opened;
    if (failure) throw failure;
    return original(...args);
  }) as GraphQLFieldResolver<unknown, unknown>;
  return {
    get calls() { return calls; },
    open,
    failWith(error: Error) { failure = error; },
    restore() { definition.resolve = original; },
  };
}

type Held = ReturnType<typeof holdResolver>;

/** Runs `body` with these resolvers held, and puts them back whatever happens. */
async function holding(t: TestStack, fields: [type: string, field: string][], body: (held: Held[]) => Promise<void>) {
  const held = fields.map(([type, field]) => holdResolver(t, type, field));
  try {
    await body(held);
  } finally {
    for (const h of held) h.restore();
  }
}

async function collapsed(t: TestStack, kind: 'graphql' | 'rest') {
  const { values } = await t.stack.gateway.metrics.collapsed.get();
  return values.find((v) => v.labels.kind === kind)?.value ?? 0;
}

/** Waits (polling, no time asserted) until `n` requests either reached the held resolver or joined one that did. */
async function settledIn(t: TestStack, held: { calls: number }, n: number, since: { graphql: number; rest: number }) {
  for (let i = 0; i < 600; i++) {
    const joined = (await collapsed(t, 'graphql')) - since.graphql + (await collapsed(t, 'rest')) - since.rest;
    if (held.calls + joined >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`only ${held.calls} calls reached the resolver`);
}

const counters = async (t: TestStack) => ({ graphql: await collapsed(t, 'graphql'), rest: await collapsed(t, 'rest') });

const gql = (t: TestStack, query: string, variables: Record<string, unknown>, token: string | null, headers: Record<string, string> = {}) =>
  t.request('POST', '/graphql', { body: { query, variables }, token, headers });

describe.each(['inprocess', 'http'])('request collapsing (SUBGRAPH_TRANSPORT=%s)', (transport) => {
  let t: TestStack;
  const statements = () => t.stack.subgraphs.find((s) => s.name === 'scoring')!.db.statements;
  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['scoring'], env: { SUBGRAPH_TRANSPORT: transport } });
    const created = await t.graphql('mutation($id: ID) { createUser(input: { userId: $id, homeZip: "60601" }) { userId } }', { id: USER_ID });
    expect(created.errors).toBeUndefined();
  }, 120_000);
  afterAll(async () => { await t?.close(); });

  it('runs N identical concurrent queries once: one SQL execution, the same full body for all, each its own request id', async () => {
    const single = statements().count;
    await gql(t, USER, { id: USER_ID }, t.token);
    const perRequest = statements().count - single;
    expect(perRequest).toBeGreaterThan(0);

    const since = await counters(t);
    await holding(t, [['Query', 'user']], async ([held]) => {
      const before = statements().count;
      const pending = Array.from({ length: N }, (_, i) => gql(t, USER, { id: USER_ID }, t.token, { 'x-request-id': `collapse-${transport}-${i}` }));
      await settledIn(t, held, N, since);
      held.open();
      const answers = await Promise.all(pending);
      expect(held.calls).toBe(1);
      expect(statements().count - before).toBe(perRequest);
      for (const [i, res] of answers.entries()) {
        expect(res.status).toBe(200);
        expect(res.body).toEqual({ data: { user: { userId: USER_ID, homeZip: expect.any(String), enrollmentStatus: expect.any(String) } } });
        expect(res.body).toEqual(answers[0].body);
        expect(res.headers.get('x-request-id')).toBe(`collapse-${transport}-${i}`);
        expect(res.headers.get('x-ratelimit-remaining')).not.toBeNull();
      }
      expect((await counters(t)).graphql - since.graphql).toBe(N - 1);
    });
  }, 60_000);

  it('collapses REST rows and GraphQL twins each within their own kind; a GET /graphql query too', async () => {
    const since = await counters(t);
    await holding(t, [['Query', 'user']], async ([held]) => {
      const rest = Array.from({ length: 3 }, () => t.request('GET', userPath(USER_ID), { token: t.token }));
      const twin = Array.from({ length: 3 }, () => gql(t, USER, { id: USER_ID }, t.token));
      const get = Array.from({ length: 3 }, () => t.request('GET', `/graphql?${new URLSearchParams({ query: USER, variables: JSON.stringify({ id: USER_ID }) })}`, { token: t.token }));
      await settledIn(t, held, 9, since);
      held.open();
      const [restAnswers, twinAnswers, getAnswers] = await Promise.all([Promise.all(rest), Promise.all(twin), Promise.all(get)]);
      expect(held.calls).toBe(3);
      const now = await counters(t);
      expect([now.rest - since.rest, now.graphql - since.graphql]).toEqual([2, 4]);
      for (const res of restAnswers) expect(res).toMatchObject({ status: 200, body: { userId: USER_ID, userID: USER_ID } });
      for (const res of [...twinAnswers, ...getAnswers]) expect(res).toMatchObject({ status: 200, body: { data: { user: { userId: USER_ID } } } });
    });
  }, 60_000);

  it('shares nothing between different clients, organisations or scopes', async () => {
    const sameOrg = await t.clientFor('org-a', ['b2b', 'roadside']);
    const fewerScopes = await t.clientFor('org-a', ['b2b']);
    const otherOrg = await t.clientFor('org-b', ['b2b', 'roadside']);
    const since = await counters(t);
    await holding(t, [['Query', 'user']], async ([held]) => {
      const tokens = [t.token, sameOrg.token, fewerScopes.token, otherOrg.token];
      const pending = tokens.map((token) => gql(t, USER, { id: USER_ID }, token));
      await settledIn(t, held, tokens.length, since);
      held.open();
      const answers = await Promise.all(pending);
      expect(held.calls).toBe(tokens.length);
      expect((await counters(t)).graphql).toBe(since.graphql);
      // The user is org-a's: org-b's client does not see it, the others do.
      expect(answers.map((res) => (res.body as { data?: { user: unknown } }).data?.user === null)).toEqual([false, false, false, true]);
    });
  }, 60_000);

  it('never shares a mutation, nor a request with an Idempotency-Key', async () => {
    const since = await counters(t);
    await holding(t, [['Mutation', 'updateUser'], ['Query', 'user']], async ([mutation, query]) => {
      const mutations = Array.from({ length: 3 }, () => gql(t, UPDATE, { id: USER_ID, zip: '60602' }, t.token));
      const keyed = Array.from({ length: 3 }, (_, i) => gql(t, USER, { id: USER_ID }, t.token, { 'idempotency-key': `collapse-${i}` }));
      const keyedRest = Array.from({ length: 2 }, (_, i) => t.request('GET', userPath(USER_ID), { token: t.token, headers: { 'idempotency-key': `collapse-rest-${i}` } }));
      await settledIn(t, { get calls() { return mutation.calls + query.calls; } }, 8, since);
      mutation.open();
      query.open();
      const answers = await Promise.all([...mutations, ...keyed, ...keyedRest]);
      expect([mutation.calls, query.calls]).toEqual([3, 5]);
      expect(await counters(t)).toEqual(since);
      for (const res of answers) expect(res.status).toBe(200);
    });
  }, 60_000);

  it("does not hand a caller an answer begun before its own mutation was answered", async () => {
    const since = await counters(t);
    await holding(t, [['Query', 'user']], async ([held]) => {
      const older = gql(t, USER, { id: USER_ID }, t.token);
      await settledIn(t, held, 1, since);
      const updated = await gql(t, UPDATE, { id: USER_ID, zip: `7${transport.length}777` }, t.token);
      expect(updated.body).toMatchObject({ data: { updateUser: { homeZip: `7${transport.length}777` } } });
      const after = gql(t, USER, { id: USER_ID }, t.token);
      await settledIn(t, held, 2, since);
      expect(held.calls).toBe(2);
      held.open();
      expect((await after).body).toMatchObject({ data: { user: { homeZip: `7${transport.length}777` } } });
      expect((await older).status).toBe(200);
      expect(await counters(t)).toEqual(since);
    });
  }, 60_000);

  it("shares the leader's errors like its data", async () => {
    const since = await counters(t);
    await holding(t, [['Query', 'user']], async ([held]) => {
      held.failWith(Object.assign(new Error('the user store is down'), { extensions: { code: 'SERVICE_UNAVAILABLE' } }));
      const pending = Array.from({ length: 3 }, () => t.request('GET', userPath(USER_ID), { token: t.token }));
      await settledIn(t, held, 3, since);
      held.open();
      const answers: HttpResult[] = await Promise.all(pending);
      expect(held.calls).toBe(1);
      const { requestId: _, ...shared } = answers[0].body as { requestId: string };
      expect(answers[0]).toMatchObject({ status: 503, body: { code: 'SERVICE_UNAVAILABLE', errors: [{ message: 'the user store is down' }] } });
      for (const res of answers) {
        expect(res.status).toBe(503);
        // Each caller's problem names its own request.
        expect(res.body).toEqual({ ...shared, requestId: res.headers.get('x-request-id') });
      }
    });
  }, 60_000);
});

describe('REQUEST_COLLAPSING=false', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['scoring'], env: { REQUEST_COLLAPSING: 'false' } });
    expect((await t.graphql('mutation($id: ID) { createUser(input: { userId: $id }) { userId } }', { id: USER_ID })).errors).toBeUndefined();
  }, 120_000);
  afterAll(async () => { await t?.close(); });

  it('runs every identical concurrent request', async () => {
    const since = await counters(t);
    await holding(t, [['Query', 'user']], async ([held]) => {
      const pending = [...Array.from({ length: 3 }, () => gql(t, USER, { id: USER_ID }, t.token)), ...Array.from({ length: 3 }, () => t.request('GET', userPath(USER_ID), { token: t.token }))];
      await settledIn(t, held, 6, since);
      held.open();
      for (const res of await Promise.all(pending)) expect(res.status).toBe(200);
      expect(held.calls).toBe(6);
    });
  }, 60_000);
});
