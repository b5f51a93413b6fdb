/**
 * The embedded default with a real data folder: one owner per folder, and `npm run clients` against
 * the running server. Every folder is temporary and removed, which the last test checks.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runNode, startChildServer, type ChildServer } from '../support/child-server.ts';

const OPERATOR = { id: 'operator', secret: 'operator-secret-0123456789' };
const env = { PGLITE_IN_MEMORY: 'false', BOOTSTRAP_CLIENT_ID: OPERATOR.id, BOOTSTRAP_CLIENT_SECRET: OPERATOR.secret, LOG_LEVEL: 'warn' };
let dataDir: string;
let server: ChildServer;

const form = (fields: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
const tokenResponse = (base: string, id: string, secret: string, scope?: string) =>
  fetch(`${base}/platform/oauth/v1/token`, form({ grant_type: 'client_credentials', client_id: id, client_secret: secret, ...(scope ? { scope } : {}) }));
const createUser = (base: string, token: string) => fetch(`${base}/shared-mobility-insights/v2/users`, {
  method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}',
});

/** Names, sizes and contents of what a refused process could have touched: the top level, the keys and the lock. */
async function footprint(folder: string) {
  const keys = await readdir(join(folder, 'keys'));
  return {
    top: (await readdir(folder)).sort(),
    keys: await Promise.all(keys.sort().map(async (k) => [k, await readFile(join(folder, 'keys', k), 'utf8')])),
    lock: await readFile(join(folder, 'owner.lock'), 'utf8'),
  };
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'frg-multiproc-'));
  server = await startChildServer(env, { dataDir });
}, 240_000);
afterAll(async () => {
  await server?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe('one owner per embedded data folder', () => {
  it('refuses a second server on the same DATA_DIR at once, naming the owner, and writes nothing', async () => {
    const before = await footprint(dataDir);
    const second = await runNode(['gateway/server.ts'], { ...env, DATABASE_URL: '', DATA_DIR: dataDir, PORT: String(await freePort()) });
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain('Refusing to start');
    expect(second.stderr).toContain(`process ${server.child.pid}`);
    expect(second.stderr).toMatch(/npm run clients/);
    expect(second.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    expect(await footprint(dataDir)).toEqual(before);
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
  }, 120_000);

  it('refuses the clients CLI on the database directly while the server holds it, saying what to do', async () => {
    const cli = await runNode(['gateway/auth/clients-cli.ts', 'list', '--url', 'http://127.0.0.1:9'], { ...env, DATABASE_URL: '', DATA_DIR: dataDir });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('no gateway answered at http://127.0.0.1:9');
    expect(cli.stderr).toContain(`process ${server.child.pid}`);
    expect(cli.stderr).toContain('--url');
  }, 120_000);
});

describe('npm run clients against the running server', () => {
  let created: { clientId: string; clientSecret: string; organisation: string; scopes: string[] };

  it('creates a client whose token works at once', async () => {
    const cli = await runNode(['gateway/auth/clients-cli.ts', 'create', '--org', 'acme', '--url', server.base], { ...env, DATABASE_URL: '', DATA_DIR: dataDir });
    expect(cli.code, cli.stderr).toBe(0);
    created = JSON.parse(cli.stdout) as typeof created;
    expect(created).toMatchObject({ organisation: 'acme', scopes: ['b2b', 'roadside'] });
    const token = await tokenResponse(server.base, created.clientId, created.clientSecret);
    expect(token.status).toBe(200);
    const { access_token: accessToken, scope } = await token.json() as { access_token: string; scope: string };
    expect(scope).toBe('b2b roadside');
    expect((await createUser(server.base, accessToken)).status).toBe(201);
    // An ordinary client is no operator: no admin token, and its token cannot reach the admin API.
    expect((await tokenResponse(server.base, created.clientId, created.clientSecret, 'admin')).status).toBe(400);
    const admin = await fetch(`${server.base}/platform/admin/v1/clients`, { headers: { authorization: `Bearer ${accessToken}` } });
    expect(admin.status).toBe(403);
    expect(admin.headers.get('content-type')).toMatch(/problem\+json/);
  }, 120_000);

  it('keeps the client across a restart, and disables it through the server at once', async () => {
    await server.stop();
    expect(existsSync(join(dataDir, 'owner.lock'))).toBe(false);
    server = await startChildServer(env, { dataDir });
    const token = await tokenResponse(server.base, created.clientId, created.clientSecret);
    expect(token.status).toBe(200);
    const { access_token: accessToken } = await token.json() as { access_token: string };
    expect((await createUser(server.base, accessToken)).status).toBe(201);

    const list = await runNode(['gateway/auth/clients-cli.ts', 'list', '--url', server.base], { ...env, DATABASE_URL: '', DATA_DIR: dataDir });
    expect((JSON.parse(list.stdout) as { clientId: string }[]).map((c) => c.clientId)).toEqual(expect.arrayContaining([OPERATOR.id, created.clientId]));
    const disable = await runNode(['gateway/auth/clients-cli.ts', 'disable', created.clientId, '--url', server.base], { ...env, DATABASE_URL: '', DATA_DIR: dataDir });
    expect(JSON.parse(disable.stdout)).toEqual({ clientId: created.clientId, disabled: true });
    expect((await createUser(server.base, accessToken)).status).toBe(401);
    expect((await tokenResponse(server.base, created.clientId, created.clientSecret)).status).toBe(401);
  }, 240_000);

  it('leaves no data folder behind', async () => {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
    expect(existsSync(dataDir)).toBe(false);
  });
});
