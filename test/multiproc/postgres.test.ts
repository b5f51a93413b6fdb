/**
 * Several gateway processes on one PostgreSQL database and one Redis: gateway A (one process) and
 * gateway B (WORKERS=2, node:cluster). Runs in both CI runs: without DATABASE_URL it uses the
 * machine's PostgreSQL (its own database, dropped after) and Redis (its own key prefix).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REVOCATION_CACHE_MS } from '../../gateway/auth/revocation.ts';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { INTERNAL_HOP_HEADER, signHop } from '../../subgraphs/platform/internal-hop.ts';
import { buildSubgraph, type Subgraph } from '../../subgraphs/platform/subgraph.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { freePort, runNode, startChildServer, type ChildServer } from '../support/child-server.ts';
import { testDatabase } from '../support/database.ts';
import { internalBearer } from '../support/internal-token.ts';
import { sourceBFull } from '../scoring/mvr-fixtures.ts';

const POSTGRES = process.env.DATABASE_URL ?? process.env.CI_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const REDIS = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const OPERATOR = { id: 'operator', secret: 'operator-secret-0123456789' };
const HOP_KEY = randomBytes(32).toString('base64url');
const LIMIT = 20;
const TOKEN_LIMIT = 5;
/** Slack for a loaded machine on top of the stated bound. */
const SLACK_MS = 1_500;

let database: Awaited<ReturnType<typeof testDatabase>>;
let env: Record<string, string>;
let a: ChildServer;
let b: ChildServer;
let adminToken: string;
const folders: string[] = [];
const figures: Record<string, unknown> = {};

/** POST form from a chosen loopback source address (127.0.0.x), so each check has its own per-address counter. */
function postForm(url: string, fields: Record<string, string>, from = '127.0.0.1'): Promise<{ status: number; body: Record<string, string> }> {
  const body = new URLSearchParams(fields).toString();
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', localAddress: from, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => { text += chunk.toString(); });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as Record<string, string> }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

const token = async (server: ChildServer, id: string, secret: string, from: string, scope?: string) => {
  const res = await postForm(`${server.base}/platform/oauth/v1/token`, { grant_type: 'client_credentials', client_id: id, client_secret: secret, ...(scope ? { scope } : {}) }, from);
  if (res.status !== 200) throw new Error(`token: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.access_token!;
};
const call = (server: ChildServer, method: string, path: string, bearer: string, body?: unknown) => fetch(`${server.base}${path}`, {
  method, headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body),
});
const admin = async (server: ChildServer, path: string, body?: unknown) => {
  const res = await call(server, 'POST', `/platform/admin/v1/clients${path}`, adminToken, body);
  expect(res.status, path).toBeLessThan(300);
  return res.json() as Promise<{ clientId: string; clientSecret: string }>;
};
const getUser = (server: ChildServer, bearer: string) => call(server, 'GET', '/shared-mobility-insights/v2/users/nobody', bearer);

/**
 * Milliseconds until `refused()` holds, polling every `everyMs` up to `limitMs`; null if it never
 * did. Polls a token still accepts count against its client's request limit.
 */
async function timeUntil(refused: () => Promise<boolean>, limitMs: number, everyMs = 200): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < limitMs) {
    if (await refused()) return Math.round(performance.now() - started);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return null;
}

beforeAll(async () => {
  database = await testDatabase(POSTGRES);
  const pair = await generateKeyPair('EdDSA', { extractable: true });
  const internal = await generateKeyPair('EdDSA', { extractable: true });
  env = {
    ...database.env, REDIS_URL: REDIS, REDIS_KEY_PREFIX: `frg-test-${randomBytes(6).toString('hex')}:`, PGLITE_IN_MEMORY: 'false', LOG_LEVEL: 'warn',
    JWT_PRIVATE_KEY: await exportPKCS8(pair.privateKey), JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey),
    INTERNAL_TOKEN_PRIVATE_KEY: await exportPKCS8(internal.privateKey), INTERNAL_TOKEN_PUBLIC_KEY: await exportSPKI(internal.publicKey),
    MVR_ENCRYPTION_KEY: randomBytes(32).toString('base64'), INTERNAL_HOP_KEY: HOP_KEY,
    BOOTSTRAP_CLIENT_ID: OPERATOR.id, BOOTSTRAP_CLIENT_SECRET: OPERATOR.secret,
    RATE_LIMIT_PER_MINUTE: String(LIMIT), TOKEN_RATE_LIMIT_PER_MINUTE: String(TOKEN_LIMIT),
  };
  // Each process its own DATA_DIR, as on separate machines: nothing is shared through files.
  a = await startChildServer(env);
  b = await startChildServer({ ...env, WORKERS: '2' });
  adminToken = await token(a, OPERATOR.id, OPERATOR.secret, '127.0.0.1', 'admin');
}, 300_000);

afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await database?.drop();
  await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
  process.stdout.write(`multi-process figures: ${JSON.stringify(figures)}\n`);
});

describe('two gateways on one PostgreSQL database and one Redis', () => {
  it(`hold one client's request limit (${LIMIT}/min) across both`, async () => {
    const c = await admin(a, '', { organisation: 'org-limit' });
    const bearer = await token(b, c.clientId, c.clientSecret, '127.0.0.2');
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) statuses.push((await getUser(i % 2 ? a : b, bearer)).status);
    const allowed = statuses.filter((s) => s !== 429).length;
    figures.requests = `${allowed} of 30 allowed across 2 gateways (limit ${LIMIT}/min)`;
    expect(allowed).toBe(LIMIT);
    expect(statuses.slice(LIMIT).every((s) => s === 429)).toBe(true);
  });

  it(`hold the token-attempt limit (${TOKEN_LIMIT}/min) across both`, async () => {
    const c = await admin(a, '', { organisation: 'org-attempts' });
    const statuses: number[] = [];
    for (let i = 0; i < 9; i++) {
      statuses.push((await postForm(`${(i % 2 ? a : b).base}/platform/oauth/v1/token`, { grant_type: 'client_credentials', client_id: c.clientId, client_secret: `wrong-${i}` }, '127.0.0.3')).status);
    }
    figures.tokenAttempts = `${statuses.filter((s) => s === 401).length} of 9 wrong secrets checked across 2 gateways (limit ${TOKEN_LIMIT}/min), the rest 429`;
    expect(statuses).toEqual([...Array(TOKEN_LIMIT).fill(401), ...Array(9 - TOKEN_LIMIT).fill(429)]);
  });

  it(`refuse a disabled client's token on both within ${REVOCATION_CACHE_MS} ms`, async () => {
    const c = await admin(a, '', { organisation: 'org-disable' });
    const bearer = await token(a, c.clientId, c.clientSecret, '127.0.0.4');
    for (const server of [a, b, b]) expect((await getUser(server, bearer)).status).toBe(404); // both workers of B warm their caches
    await admin(a, `/${c.clientId}/disable`);
    expect((await getUser(a, bearer)).status).toBe(401); // the process that disabled it: at once
    // Fine polling: the gate refuses before the limiter counts, so once refused a poll costs nothing (429s before that do not matter).
    const onB = await timeUntil(async () => (await getUser(b, bearer)).status === 401 && (await getUser(b, bearer)).status === 401, REVOCATION_CACHE_MS + SLACK_MS, 25);
    figures.disablePropagationMs = onB;
    expect(onB).not.toBeNull();
  });

  it('refuse tokens issued before a rotation on both, and accept the new secret\'s token at once', async () => {
    const c = await admin(b, '', { organisation: 'org-rotate' });
    const before = await token(b, c.clientId, c.clientSecret, '127.0.0.5');
    for (const server of [a, b, b]) expect((await getUser(server, before)).status).toBe(404);
    const rotated = await admin(b, `/${c.clientId}/rotate`); // minted in the same second as the token: still refused
    const onA = await timeUntil(async () => (await getUser(a, before)).status === 401, REVOCATION_CACHE_MS + SLACK_MS);
    figures.rotationPropagationMs = onA;
    expect(onA).not.toBeNull();
    const after = await token(a, c.clientId, rotated.clientSecret, '127.0.0.5');
    for (const server of [a, b, b, a]) expect((await getUser(server, after)).status).toBe(404);
    expect((await postForm(`${a.base}/platform/oauth/v1/token`, { grant_type: 'client_credentials', client_id: c.clientId, client_secret: c.clientSecret }, '127.0.0.5')).status).toBe(401);
  });

  it('read through one an MVR written through the other', async () => {
    const c = await admin(a, '', { organisation: 'org-mvr' });
    const bearer = await token(a, c.clientId, c.clientSecret, '127.0.0.6');
    expect((await call(a, 'POST', '/shared-mobility-insights/v2/users', bearer, { userID: 'mp-user' })).status).toBe(201);
    const graphql = (server: ChildServer, query: string, variables = {}) => call(server, 'POST', '/graphql', bearer, { query, variables }).then((r) => r.json() as Promise<{ data?: any; errors?: unknown }>); // eslint-disable-line @typescript-eslint/no-explicit-any
    const written = await graphql(a, 'mutation($r: JSON) { createMvr(userId: "mp-user", source: SOURCE_B, report: $r) { id } }', { r: sourceBFull() });
    expect(written.errors).toBeUndefined();
    const read = await graphql(b, '{ user(userId: "mp-user") { mvrRecords { id report summary { violations { acdCode } } } } }');
    expect(read.errors).toBeUndefined();
    expect(read.data.user.mvrRecords).toEqual([{ id: written.data.createMvr.id, report: JSON.stringify(sourceBFull()), summary: { violations: [{ acdCode: 'A21' }] } }]);
  });

  it('refuse to start a third process whose MVR key is its own (no MVR_ENCRYPTION_KEY, a DATA_DIR of its own)', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'frg-mismatch-'));
    folders.push(dataDir);
    const third = await runNode(['gateway/server.ts'], { ...env, MVR_ENCRYPTION_KEY: '', DATA_DIR: dataDir, PORT: String(await freePort()) }, 180_000);
    expect(third.code).toBe(1);
    expect(third.stderr).toContain('Refusing to start');
    expect(third.stderr).toMatch(/MVR records are written with key [0-9a-f]{16}/);
    expect(third.stderr).toContain('MVR_ENCRYPTION_KEY');
  }, 200_000);

  it('a subgraph on its own needs none of the gateway\'s tables: it takes the gateways\' internal token, never a client\'s', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'frg-subgraph-'));
    folders.push(dataDir);
    // A database of its own, where platform.clients does not exist; the public internal token key only.
    const own = await testDatabase(POSTGRES);
    const config = loadConfig({ ...env, ...own.env, DATA_DIR: dataDir, NODE_ENV: 'test', JWT_PRIVATE_KEY: '', JWT_PUBLIC_KEY: '', INTERNAL_TOKEN_PRIVATE_KEY: '' });
    const subgraph: Subgraph = await buildSubgraph(subgraphDefinitions.scoring!, config);
    try {
      const url = `${await subgraph.app.listen({ host: '127.0.0.1', port: 0 })}/graphql`;
      const c = await admin(a, '', { organisation: 'org-direct' });
      const bearer = await token(a, c.clientId, c.clientSecret, '127.0.0.7');
      const direct = async (authorization: string) => {
        const body = JSON.stringify({ query: '{ user(userId: "nobody") { userId } }' });
        const res = await fetch(url, { method: 'POST', body, headers: { authorization, 'content-type': 'application/json', [INTERNAL_HOP_HEADER]: signHop(HOP_KEY, { method: 'POST', target: '/graphql', body }) } });
        return { status: res.status, ...(await res.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] } };
      };
      expect(await direct(`Bearer ${bearer}`)).toMatchObject({ status: 401, errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
      const caller = { clientId: c.clientId, orgId: 'org-direct', scopes: ['b2b' as const] };
      expect(await direct(await internalBearer(loadConfig(env), 'scoring', caller))).toEqual({ status: 200, data: { user: null } });
    } finally {
      await subgraph.close();
      await own.drop();
    }
  }, 120_000);

  it('refuse WORKERS>1 on the embedded database', async () => {
    const refused = await runNode(['gateway/server.ts'], { WORKERS: '2', DATABASE_URL: '', PGLITE_IN_MEMORY: 'true', PORT: String(await freePort()) });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('WORKERS=2 needs PostgreSQL (DATABASE_URL)');
  });
});
