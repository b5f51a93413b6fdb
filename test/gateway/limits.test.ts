import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';

let t: TestStack;

describe('GraphQL abuse limits', () => {
  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['scoring'], env: { GRAPHQL_MAX_DEPTH: '1', GRAPHQL_MAX_ALIASES: '3', GRAPHQL_INTROSPECTION: 'false' } });
  });
  afterAll(async () => { await t?.close(); });

  it('rejects a document deeper than the limit, naming the limit', async () => {
    const res = await t.graphql('{ user(userId: "x") { userId } }');
    expect(res.status).toBe(400);
    expect(res.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(res.errors?.[0].message).toMatch(/depth/i);
  });

  it('rejects too many aliases', async () => {
    const res = await t.graphql('{ a: user(userId: "1") { userId } b: user(userId: "2") { userId } c: user(userId: "3") { userId } d: user(userId: "4") { userId } }');
    expect(res.status).toBe(400);
    expect(res.errors?.some((e) => /aliases/i.test(e.message))).toBe(true);
  });

  it('refuses batched HTTP requests and, when configured, introspection', async () => {
    const batch = await t.request('POST', '/graphql', { token: t.token, body: [{ query: '{ __typename }' }, { query: '{ __typename }' }] });
    expect(batch.status).toBe(400);
    const intro = await t.graphql('{ __schema { queryType { name } } }');
    expect(intro.errors?.[0].message).toMatch(/introspection/i);
  });

  it('supports automatic persisted queries', async () => {
    const query = '{ __typename }';
    const sha256Hash = createHash('sha256').update(query).digest('hex');
    const extensions = { persistedQuery: { version: 1, sha256Hash } };
    const miss = await t.request('POST', '/graphql', { token: t.token, body: { extensions } });
    expect(miss.body.errors[0].extensions.code).toBe('PERSISTED_QUERY_NOT_FOUND');
    const register = await t.request('POST', '/graphql', { token: t.token, body: { query, extensions } });
    expect(register.body.data).toEqual({ __typename: 'Query' });
    const hit = await t.request('POST', '/graphql', { token: t.token, body: { extensions } });
    expect(hit.body.data).toEqual({ __typename: 'Query' });
  });
});

describe('cost limit', () => {
  beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring'], env: { GRAPHQL_MAX_COST: '100' } }); });
  afterAll(async () => { await t?.close(); });

  it('rejects a document whose estimated cost is over the limit, before any subgraph is called', async () => {
    const cheap = await t.graphql('{ user(userId: "nobody") { userId } }');
    expect(cheap.errors).toBeUndefined();
    const nested = `bookings(first: 100) { nodes { bookingId vin userId deviceId startTimestamp vehicle { vin deviceId bookings(first: 100) { nodes { bookingId vin userId } } } } }`;
    const res = await t.graphql(`{ user(userId: "nobody") { userId ${nested} } }`);
    expect(res.status).toBe(400);
    // Computed with the variables' values (see test/gateway/cost.test.ts), so not a validation rule any more.
    expect(res.errors?.[0].extensions?.code).toBe('COST_LIMIT_EXCEEDED');
    expect(res.errors?.[0].message).toMatch(/cost/i);
  });
});

describe('request limits', () => {
  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['scoring'], env: { RATE_LIMIT_PER_MINUTE: '40', TOKEN_RATE_LIMIT_PER_MINUTE: '6' } });
  });
  afterAll(async () => { await t?.close(); });

  it('answers a body over the size limit with 413 problem+json, writing nothing', async () => {
    const res = await t.request('POST', '/shared-mobility-insights/v2/users', { token: t.token, body: { userId: 'huge', pad: 'x'.repeat(1_100_000) } });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect((await t.request('GET', '/shared-mobility-insights/v2/users/huge', { token: t.token })).status).toBe(404);
  });

  it('slows token brute force per client id and per address, with Retry-After', async () => {
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 8; i++) {
      last = await t.request('POST', '/platform/oauth/v1/token', { form: { grant_type: 'client_credentials', client_id: DEFAULT_CLIENT.id, client_secret: `guess-${i}` } });
      statuses.push(last.status);
    }
    // the stack's own token request at start-up counted as one attempt
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(4);
    expect(statuses.at(-1)).toBe(429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(last!.body.error).toBe('too_many_requests');
  });

  it('limits requests per client with 429 and Retry-After, other clients unaffected', async () => {
    let res;
    let count = 1; // the size-limit test above made one request with this token
    do {
      res = await t.request('GET', '/shared-mobility-insights/v2/users/nobody', { token: t.token });
      count += 1;
    } while (res.status !== 429 && count < 100);
    expect(res.status).toBe(429);
    expect(count).toBeLessThanOrEqual(41);
    expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    expect(res.body.code).toBe('RATE_LIMITED');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    const gql = await t.request('POST', '/graphql', { token: t.token, body: { query: '{ __typename }' } });
    expect(gql.status).toBe(429);
  });
});
