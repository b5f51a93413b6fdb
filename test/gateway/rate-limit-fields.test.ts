/**
 * The RateLimit header fields (draft-ietf-httpapi-ratelimit-headers-10) as a client reads them: each
 * value parsed strictly as an RFC 8941 list by structured-headers, on REST and GraphQL answers (429s
 * included) under the `client` policy, and on the token endpoints under their own policies; answers
 * refused before counting carry none. The document declares them on every operation.
 */
import { parseList, type Item } from 'structured-headers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type HttpResult, type TestStack } from '../support/stack.ts';

const LIMIT = 12;
const TOKEN_LIMIT = 7;
const TOKEN_ADDRESS_LIMIT = 9;
const USER = '/shared-mobility-insights/v2/users/nobody';
const TOKEN = '/platform/oauth/v1/token';
const ROADSIDE_TOKEN = '/services/roadside/v1/oauth/accesstoken';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({
    subgraphs: ['scoring'],
    env: {
      RATE_LIMIT_PER_MINUTE: String(LIMIT), TOKEN_RATE_LIMIT_PER_MINUTE: String(TOKEN_LIMIT),
      TOKEN_ADDRESS_RATE_LIMIT_PER_MINUTE: String(TOKEN_ADDRESS_LIMIT),
    },
  });
}, 120_000);
afterAll(async () => { await t?.close(); });

/** A field's members as `{ name: { parameter: value } }`; throws unless the value is a valid RFC 8941 list of string items. */
function members(value: string | null): Record<string, Record<string, unknown>> {
  if (value === null) throw new Error('field absent');
  return Object.fromEntries(parseList(value).map((member) => {
    const [name, parameters] = member as Item;
    if (typeof name !== 'string') throw new Error(`policy name ${String(name)} is not a string item`);
    return [name, Object.fromEntries(parameters)];
  }));
}
const fields = (res: { headers: Headers }) =>
  ({ policy: members(res.headers.get('ratelimit-policy')), limit: members(res.headers.get('ratelimit')) });

const basic = (id: string, secret: string) => ({ authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}` });

describe('RateLimit fields on counted answers', () => {
  it('REST and GraphQL share the client policy: each answer one less, a 429 at zero with t = Retry-After', async () => {
    const { token } = await t.clientFor('org-ratelimit-fields');
    const answers: HttpResult[] = [];
    for (let i = 0; i < 3; i++) answers.push(await t.request('GET', USER, { token }));
    const graphql = await fetch(`${t.url}/graphql`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(answers.map((a) => a.status)).toEqual([404, 404, 404]);
    expect(graphql.status).toBe(200);
    const read = [...answers, graphql].map(fields);
    for (const { policy, limit } of read) {
      expect(policy).toEqual({ client: { q: LIMIT, w: 60 } });
      expect(Object.keys(limit)).toEqual(['client']);
      expect(limit.client!.t).toBeGreaterThanOrEqual(0);
      expect(limit.client!.t).toBeLessThanOrEqual(60);
    }
    expect(read.map(({ limit }) => limit.client!.r)).toEqual([LIMIT - 1, LIMIT - 2, LIMIT - 3, LIMIT - 4]);
    // The older fields stay, saying the same.
    expect(Number(graphql.headers.get('x-ratelimit-remaining'))).toBe(LIMIT - 4);

    let last = answers[0]!;
    while (last.status !== 429) last = await t.request('GET', USER, { token });
    const over = fields(last).limit.client!;
    expect(over.r).toBe(0);
    expect(over.t).toBe(Number(last.headers.get('retry-after')));
  });

  it('an answer refused before the limit counts it (no token) carries none', async () => {
    const refused = await t.request('GET', USER, { token: 'not-a-token' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('ratelimit')).toBeNull();
    expect(refused.headers.get('ratelimit-policy')).toBeNull();
  });

  it('the token endpoints count failed attempts under token-address and token-client', async () => {
    const { clientId, clientSecret } = await t.clientFor('org-ratelimit-tokens');
    const grant = (secret: string) => t.request('POST', TOKEN, {
      form: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret },
    });
    const ok = await grant(clientSecret);
    expect(ok.status).toBe(200);
    const first = fields(ok);
    expect(first.policy).toEqual({ 'token-address': { q: TOKEN_ADDRESS_LIMIT, w: 60 }, 'token-client': { q: TOKEN_LIMIT, w: 60 } });
    // A success is given back; a failure stays counted.
    const failed = fields(await grant('wrong-secret'));
    expect(failed.limit['token-client']!.r).toBe(first.limit['token-client']!.r as number - 1);
    expect(failed.limit['token-address']!.r).toBe(first.limit['token-address']!.r as number - 1);
    const again = fields(await grant(clientSecret));
    expect(again.limit['token-client']!.r).toBe(failed.limit['token-client']!.r);

    // The roadside endpoint's attempts are the same attempts.
    const roadside = await t.request('POST', `${ROADSIDE_TOKEN}?grant_type=client_credentials`, { headers: basic(clientId, 'wrong') });
    expect(roadside.status).toBe(401);
    expect(fields(roadside).limit['token-client']!.r).toBe(failed.limit['token-client']!.r as number - 1);
  });
});

describe('the document', () => {
  it('declares the RateLimit fields and X-Request-Id on every operation\'s success answer', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>>;
    };
    const missing: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, { responses }] of Object.entries(item)) {
        const success = Object.entries(responses).find(([status]) => status.startsWith('2'))![1];
        for (const name of ['RateLimit-Policy', 'RateLimit', 'X-Request-Id']) {
          if (!success.headers?.[name]) missing.push(`${method} ${path}: ${name}`);
        }
      }
    }
    expect(missing).toEqual([]);
    expect(t.contract.violations).toEqual([]);
  });
});
