/**
 * Every check that matches a path reads the routed path, not the raw URL: `/%67raphql` is routed to
 * /graphql, so it is /graphql for the CSRF rule, the shape of refusals, the idempotency fingerprint
 * and the IDE. (The overload exemptions and the subgraphs' open paths: overload.test.ts, exposure.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';

const ENCODED_GRAPHQL = '/%67raphql';

let t: TestStack;
beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring'] }); });
afterAll(async () => { await t?.close(); });

describe('/%67raphql is /graphql', () => {
  it('refuses a form POST as CSRF (400), and runs nothing', async () => {
    const form = 'query=mutation%20%7B%20createUser(input%3A%20%7B%20userId%3A%20%22routed-csrf%22%20%7D)%20%7B%20userId%20%7D%20%7D';
    for (const path of ['/graphql', ENCODED_GRAPHQL, '/graphql/']) {
      const res = await fetch(`${t.url}${path}`, {
        method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${t.token}` }, body: form,
      });
      expect(res.status, path).toBe(400);
      expect(await res.text(), path).toMatch(/CSRF/);
    }
    expect((await t.graphql('{ user(userId: "routed-csrf") { userId } }')).data).toEqual({ user: null });
  });

  it('answers its refusals in the GraphQL shape: a bad token, and a body nested too deep', async () => {
    const badToken = await t.request('POST', ENCODED_GRAPHQL, { token: 'not-a-token', body: { query: '{ __typename }' } });
    expect(badToken.status).toBe(401);
    expect(badToken.headers.get('content-type')).toMatch(/^application\/json/);
    expect(badToken.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const deep = `{"query":"query($r: JSON) { __typename }","variables":{"r":${'{"a":'.repeat(100)}1${'}'.repeat(100)}}}`;
    const tooDeep = await t.request('POST', ENCODED_GRAPHQL, { token: t.token, body: deep });
    expect(tooDeep.status).toBe(400);
    expect(tooDeep.headers.get('content-type')).toMatch(/^application\/json/);
    expect(tooDeep.body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
  });

  it('serves the IDE to a browser', async () => {
    const res = await fetch(`${t.url}${ENCODED_GRAPHQL}`, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toMatch(/GraphiQL/);
  });
});

describe('the idempotency fingerprint', () => {
  it('is of the path as routed: an encoded or slash-ended path with the same key and body is a replay, not a key reused', async () => {
    const body = { userId: 'routed-idempotent', homeZip: '60601' };
    const headers = { 'idempotency-key': 'routed-path-1' };
    const first = await t.request('POST', '/shared-mobility-insights/v2/users', { token: t.token, body, headers });
    expect(first.status).toBe(201);
    for (const path of ['/shared-mobility-insights/v2/%75sers', '/shared-mobility-insights/v2/users/']) {
      const again = await t.request('POST', path, { token: t.token, body, headers });
      expect(again.status, path).toBe(201);
      expect(again.headers.get('idempotent-replayed'), path).toBe('true');
      expect(again.body, path).toEqual(first.body);
    }
  });
});
