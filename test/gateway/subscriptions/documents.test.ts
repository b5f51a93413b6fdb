import { Lexer, Source, TokenKind } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { sseClient, subscriptionsActive, wsClient, type Watcher } from '../../support/subscriptions.ts';

const MAX_TOKENS = 200;
let t: TestStack;
let users = 0;

beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring'], env: { GRAPHQL_MAX_TOKENS: String(MAX_TOKENS) } }); });
afterAll(async () => { await t?.close(); });

const gql = async (query: string) => {
  const res = await t.graphql(query);
  if (res.errors) throw new Error(JSON.stringify(res.errors));
};
const tokens = (document: string) => {
  const lexer = new Lexer(new Source(document));
  let count = 0;
  while (lexer.advance().kind !== TokenKind.EOF) count += 1;
  return count;
};
/** A subscription of `userUpdated` selecting `selection`. */
const watchUser = (selection: string) => `subscription($id: ID!) { userUpdated(userId: $id) { ${selection} } }`;
/** Exactly GRAPHQL_MAX_ALIASES (30) aliases. */
const ALIASED = watchUser(Array.from({ length: 30 }, (_, i) => `z${i}: homeZip`).join(' '));
/** `homeZip` repeated up to `count` tokens in all. */
const padded = (count: number) => watchUser(`userId${' homeZip'.repeat(count - tokens(watchUser('userId')))}`);

const transports = {
  'graphql-ws': (authorization: string) => wsClient(t.url, authorization),
  'graphql-sse': (authorization: string) => sseClient(t.url, authorization),
  'graphql-sse (single connection)': (authorization: string) => sseClient(t.url, authorization, true),
};

/** Subscribes with `document`, changes the user once and returns what arrived. */
async function firstEvent(transport: keyof typeof transports, document: string) {
  users += 1;
  const userId = `doc-${users}`;
  await gql(`mutation { createUser(input: { userId: "${userId}", dateOfBirth: "1990-04-01", homeZip: "60606" }) { userId } }`);
  const client = transports[transport](`Bearer ${t.token}`);
  const watching: Watcher = client.subscribe(document, { id: userId });
  await Promise.race([subscriptionsActive(t.stack.gateway, 1), watching.ended.then((error) => { throw new Error(`refused: ${JSON.stringify(error)}`); })]);
  await gql(`mutation { updateUser(userId: "${userId}", input: { homeZip: "94105" }) { userId } }`);
  const received = await watching.nth(1);
  client.dispose();
  await subscriptionsActive(t.stack.gateway, 0);
  return received;
}

describe('a subscription document at the limits', () => {
  it.each(Object.keys(transports) as (keyof typeof transports)[])('receives events with exactly GRAPHQL_MAX_ALIASES aliases, over %s', async (transport) => {
    const received = await firstEvent(transport, ALIASED);
    expect(received.errors).toBeUndefined();
    expect(received.data).toEqual({ userUpdated: Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`z${i}`, '94105'])) });
  });

  it.each(Object.keys(transports) as (keyof typeof transports)[])('receives events with exactly GRAPHQL_MAX_TOKENS tokens, over %s', async (transport) => {
    expect(tokens(padded(MAX_TOKENS))).toBe(MAX_TOKENS);
    const received = await firstEvent(transport, padded(MAX_TOKENS));
    expect(received.errors).toBeUndefined();
    expect(received.data.userUpdated).toEqual({ userId: expect.stringMatching(/^doc-/), homeZip: '94105' });
  });

  it('is refused one token past GRAPHQL_MAX_TOKENS, one alias past GRAPHQL_MAX_ALIASES', async () => {
    for (const [document, code] of [[padded(MAX_TOKENS + 1), 'GRAPHQL_PARSE_FAILED'], [ALIASED.replace('z0: homeZip', 'z0: homeZip z30: homeZip'), 'GRAPHQL_VALIDATION_FAILED']]) {
      const res = await t.request('POST', '/graphql/stream', { token: t.token, headers: { accept: 'text/event-stream' }, body: { query: document, variables: { id: 'u' } } });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].extensions.code).toBe(code);
    }
  });
});

describe('the watched key', () => {
  const LONG = 'u'.repeat(256);
  const refusal = { message: 'userId must be at most 255 characters', extensions: { code: 'BAD_USER_INPUT', field: 'userId' } };

  it('over 255 characters is refused with BAD_USER_INPUT naming the argument, over graphql-ws', async () => {
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    for (const [document, variables] of [[watchUser('userId'), { id: LONG }], [`subscription { userUpdated(userId: "${LONG}") { userId } }`, {}]] as const) {
      const refused = ws.subscribe(document, variables);
      expect(await refused.ended).toEqual([expect.objectContaining(refusal)]);
    }
    // 255 characters are a key like any other.
    const fine = ws.subscribe(watchUser('userId'), { id: LONG.slice(1) });
    await subscriptionsActive(t.stack.gateway, 1);
    fine.dispose();
    ws.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });

  it('over 255 characters is refused with 400 BAD_USER_INPUT naming the argument, over graphql-sse', async () => {
    const res = await t.request('POST', '/graphql/stream', {
      token: t.token, headers: { accept: 'text/event-stream' }, body: { query: watchUser('userId'), variables: { id: LONG } }, signal: AbortSignal.timeout(10_000),
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining(refusal)]);
  });
});
