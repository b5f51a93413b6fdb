/**
 * graphql-http's server audits (the GraphQL over HTTP specification's conformance checks) against
 * the gateway's /graphql, with a token as every caller of the graph sends one. Every audit passes
 * but the documented exceptions below.
 */
import { serverAudits } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';

/**
 * Audits at odds with a documented choice (docs/graphql.md, "Request errors"): a document that does
 * not parse or validate, or variables that do not coerce, answer 400 for `application/json` as for
 * `application/graphql-response+json` (Apollo Server's behaviour), where the specification prefers 200
 * for the legacy type.
 */
const EXPECTED_EXCEPTIONS: Record<string, string> = {
  '572B': 'SHOULD use 200 status code on document parsing failure when accepting application/json',
  FDE2: 'SHOULD use 200 status code on document validation failure when accepting application/json',
  '7B9B': 'SHOULD use a status code of 200 on variable coercion failure when accepting application/json',
};

let t: TestStack;
beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring'] }); });
afterAll(async () => { await t?.close(); });

describe('graphql-http server audits', () => {
  it('pass, but for the documented exceptions', async () => {
    const withToken = (input: string | URL | Request, init?: RequestInit) => fetch(input, {
      ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${t.token}` },
    });
    const audits = serverAudits({ url: `${t.url}/graphql`, fetchFn: withToken });
    expect(audits.length).toBeGreaterThan(40);
    const notOk: Record<string, string> = {};
    for (const audit of audits) {
      const result = await audit.fn();
      if (result.status !== 'ok') notOk[audit.id] = audit.name;
    }
    expect(notOk).toEqual(EXPECTED_EXCEPTIONS);
    console.log(`graphql-http: ${audits.length - Object.keys(notOk).length} of ${audits.length} audits ok, ${Object.keys(notOk).length} documented exceptions`);
  });
});
