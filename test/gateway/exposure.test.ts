import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { INTERNAL_HOP_HEADER, signHop } from '../../subgraphs/platform/internal-hop.ts';
import { exportSPKI, generateKeyPair, type CryptoKey } from 'jose';
import { signInternalToken } from '../../subgraphs/platform/auth/internal-token.ts';
import { issueToken, type Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { buildSubgraph, type Subgraph } from '../../subgraphs/platform/subgraph.ts';
import { testDatabase } from '../support/database.ts';
import { listeningPorts } from '../support/ports.ts';
import { startTestStack, TEST_HOP_KEY } from '../support/stack.ts';

/** 3,000 aliases of one field: what a caller would send to multiply a subgraph's work. */
const ALIASES = `{ ${Array.from({ length: 3_000 }, (_, i) => `a${i}: __typename`).join(' ')} }`;
/** About 694 KB of nested introspection selections. */
const INTROSPECTION = (() => {
  const one = (i: number) => `i${i}: __schema { types { name fields { name type { name ofType { name fields { name type { name } } } } } } }`;
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < 694 * 1024; i++) { const part = one(i); parts.push(part); size += part.length + 1; }
  return `{ ${parts.join(' ')} }`;
})();

describe('a subgraph that listens (docker compose, <NAME>_URL)', () => {
  let subgraph: Subgraph;
  let url: string;
  let dataDir: string;
  let drop: () => Promise<void>;
  /** The gateway's internal token key: the subgraph is given its public half only. */
  let gatewayKey: CryptoKey;
  const ISSUER = 'fleet-risk-graph';

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'frg-exposure-'));
    const database = await testDatabase();
    drop = database.drop;
    const pair = await generateKeyPair('EdDSA', { extractable: true });
    gatewayKey = pair.privateKey;
    const config = loadConfig({
      NODE_ENV: 'test', LOG_LEVEL: 'error', DATA_DIR: dataDir, INTERNAL_HOP_KEY: TEST_HOP_KEY, JWT_ISSUER: ISSUER,
      INTERNAL_TOKEN_PUBLIC_KEY: await exportSPKI(pair.publicKey), ...database.env,
    });
    subgraph = await buildSubgraph(subgraphDefinitions.scoring, config);
    url = await subgraph.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => {
    await subgraph?.close();
    await drop?.();
    await rm(dataDir, { recursive: true, force: true });
  });

  const post = (body: string, hop?: string, authorization?: string) => fetch(`${url}/graphql`, {
    method: 'POST', body,
    headers: { 'content-type': 'application/json', ...(hop ? { [INTERNAL_HOP_HEADER]: hop } : {}), ...(authorization ? { authorization } : {}) },
  });
  const signed = (body: string, key = TEST_HOP_KEY, now?: number, authorization?: string) =>
    post(body, signHop(key, { method: 'POST', target: '/graphql', body, now }), authorization);

  it('refuses requests without a valid gateway signature with 401, whatever they carry', async () => {
    const body = JSON.stringify({ query: '{ __typename }' });
    for (const res of [
      await post(body),
      await post(body, 't=1,sig=nonsense'),
      await signed(body, 'another-key-that-is-long-enough-0123456789'),
      await signed(body, TEST_HOP_KEY, Date.now() - 10 * 60_000),
      await post(JSON.stringify({ query: ALIASES })),
    ]) {
      expect(res.status).toBe(401);
      expect(((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
    // A signature over another body does not carry over.
    const other = signHop(TEST_HOP_KEY, { method: 'POST', target: '/graphql', body: '{"query":"{ __typename }"}' });
    expect((await post(JSON.stringify({ query: '{ user(userId: "x") { userId } }' }), other)).status).toBe(401);
    // The health probes stay open; a signed request goes through.
    for (const path of ['/healthz', '/%68ealthz']) expect((await fetch(`${url}${path}`)).status, path).toBe(200);
    const ok = await signed(body);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ data: { __typename: 'Query' } });
  });

  it('takes who calls from the gateway\'s internal token only: a client\'s own token, a forged, expired or another subgraph\'s one is 401', async () => {
    const caller: Caller = { clientId: 'client-1', orgId: 'org-direct', scopes: ['b2b'] };
    const body = JSON.stringify({ query: '{ user(userId: "nobody") { userId } }' });
    const as = (authorization: string) => signed(body, TEST_HOP_KEY, undefined, authorization);
    const internal = (options: { key?: CryptoKey; subgraph?: string; now?: number; issuer?: string } = {}) =>
      signInternalToken(caller, options.subgraph ?? 'scoring', options.key ?? gatewayKey, { issuer: options.issuer ?? ISSUER, now: options.now });
    const accessKeys = await generateKeyPair('EdDSA');
    const refused = {
      'a client access token': await issueToken(caller, 0, accessKeys.privateKey, ISSUER),
      'a client access token signed with the internal key': await issueToken(caller, 0, gatewayKey, ISSUER),
      'forged (another key)': await internal({ key: (await generateKeyPair('EdDSA')).privateKey }),
      'expired': await internal({ now: Math.floor(Date.now() / 1000) - 10 * 60 }),
      'for another subgraph': await internal({ subgraph: 'booking' }),
      'another issuer': await internal({ issuer: 'someone-else' }),
      'tampered': (await internal()).replace(/\.[^.]+$/, `.${'A'.repeat(86)}`),
    };
    for (const [label, token] of Object.entries(refused)) {
      const res = await as(`Bearer ${token}`);
      expect(res.status, label).toBe(401);
      expect(((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0].extensions.code, label).toBe('UNAUTHENTICATED');
    }
    expect((await as('Basic Y2xpZW50OnNlY3JldA==')).status).toBe(401);
    const ok = await as(`Bearer ${await internal()}`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ data: { user: null } });
  });

  it('applies the gateway\'s GraphQL limits to signed requests: 3,000 aliases and a 694 KB introspection document are refused', async () => {
    const aliases = await signed(JSON.stringify({ query: ALIASES }));
    expect(aliases.status).toBe(400);
    const aliasErrors = ((await aliases.json()) as { errors: { message: string; extensions: { code: string } }[] }).errors;
    expect(aliasErrors[0].extensions.code).toMatch(/GRAPHQL_(VALIDATION|PARSE)_FAILED/);

    const started = performance.now();
    const heavy = await signed(JSON.stringify({ query: INTROSPECTION }));
    const ms = performance.now() - started;
    expect(heavy.status).toBe(400);
    const text = await heavy.text();
    expect(text.length).toBeLessThan(10_000);
    expect(text).toMatch(/GRAPHQL_(VALIDATION|PARSE)_FAILED/);
    console.log(`listening subgraph: ${(INTROSPECTION.length / 1024).toFixed(0)} KB introspection-heavy document refused in ${ms.toFixed(0)} ms (${text.length} bytes answered)`);
  });

  it('bounds JSON nesting as the gateway does: a signed body, document or variables nested 3,000 deep is a 400 BAD_USER_INPUT', async () => {
    const deep = `${'{"a":'.repeat(3_000)}1${'}'.repeat(3_000)}`;
    const mutation = 'mutation($r: JSON) { createMvr(userId: "u", source: SOURCE_A, report: $r) { id } }';
    for (const body of [
      `{"query":${JSON.stringify(mutation)},"variables":{"r":${deep}}}`,
      JSON.stringify({ query: `mutation { createMvr(userId: "u", source: SOURCE_A, report: ${'['.repeat(3_000)}${']'.repeat(3_000)}) { id } }` }),
    ]) {
      const res = await signed(body);
      expect(res.status).toBe(400);
      const { errors } = (await res.json()) as { errors: { message: string; extensions: { code: string; reason: string } }[] };
      expect(errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', reason: 'TOO_DEEP' });
      expect(errors[0].message).toMatch(/JSON_MAX_DEPTH/);
    }
  });
});

describe('the embedded default', () => {
  it('listens on the gateway\'s port only: every subgraph runs in-process, no subgraph port', async () => {
    // Everything this test process listens on is what the stack opened (the subgraph above is closed).
    const t = await startTestStack();
    try {
      const ports = await listeningPorts(process.pid);
      const gatewayPort = Number(new URL(t.url).port);
      expect(t.stack.subgraphs.map((s) => s.name).sort()).toEqual(Object.keys(subgraphDefinitions).sort());
      expect(t.stack.subgraphs.every((s) => !s.app.server.listening)).toBe(true);
      expect(ports).toEqual([gatewayPort]);
      console.log(`embedded default: listening ports ${ports.join(', ')} (the gateway's); subgraph ports: none`);
    } finally {
      await t.close();
    }
  }, 300_000);
});
