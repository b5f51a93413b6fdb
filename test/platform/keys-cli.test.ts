/**
 * `npm run keys` prints an environment block the configuration takes as is: loaded as an env file and
 * through a shell, its keys sign and verify a token, encrypt and decrypt an MVR report, sign a hop.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseEnv } from 'node:util';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../subgraphs/platform/config.ts';
import { loadInternalSigningKey, loadInternalVerifyingKey, loadSigningKeys } from '../../subgraphs/platform/auth/keys.ts';
import { internalTokenVerifier, signInternalToken } from '../../subgraphs/platform/auth/internal-token.ts';
import { issueToken, verifyToken } from '../../subgraphs/platform/auth/tokens.ts';
import { INTERNAL_HOP_HEADER, requireInternalHop, signHop } from '../../subgraphs/platform/internal-hop.ts';
import { loadReportVault } from '../../subgraphs/platform/crypto/vault.ts';
import { runNode } from '../support/child-server.ts';

const KEYS = ['JWT_PRIVATE_KEY', 'JWT_PUBLIC_KEY', 'INTERNAL_TOKEN_PRIVATE_KEY', 'INTERNAL_TOKEN_PUBLIC_KEY', 'MVR_ENCRYPTION_KEY', 'INTERNAL_HOP_KEY'];

let dir: string;
let block: string;
let config: Config;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'frg-keys-'));
  const run = await runNode(['subgraphs/platform/auth/keys-cli.ts'], {});
  expect(run.code, run.stderr).toBe(0);
  block = run.stdout;
  // DATA_DIR empty: any key the configuration did not take would be generated there instead.
  config = loadConfig({ ...parseEnv(block), DATA_DIR: dir });
}, 60_000);
afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

describe('npm run keys', () => {
  it('prints the six keys, one variable a line', () => {
    const env = parseEnv(block);
    expect(Object.keys(env).sort()).toEqual([...KEYS].sort());
    for (const line of block.trim().split('\n')) expect(line).toMatch(/^(#.*|[A-Z_]+='[^'\n]+')$/);
  });

  it('gives a JWT pair that signs and verifies an access token', async () => {
    const keys = await loadSigningKeys(config);
    const caller = { clientId: 'client_1', orgId: 'acme', scopes: ['b2b' as const] };
    const token = await issueToken(caller, 1, keys.privateKey, config.JWT_ISSUER);
    expect(await verifyToken(token, keys.publicKey, config.JWT_ISSUER)).toEqual(caller);
  });

  it('gives an internal token pair: the gateway signs with the private key, a subgraph given the public key alone verifies', async () => {
    const caller = { clientId: 'client_1', orgId: 'acme', scopes: ['b2b' as const] };
    const token = await signInternalToken(caller, 'booking', await loadInternalSigningKey(config), { issuer: config.JWT_ISSUER });
    const subgraph = loadConfig({ INTERNAL_TOKEN_PUBLIC_KEY: parseEnv(block).INTERNAL_TOKEN_PUBLIC_KEY, DATA_DIR: dir });
    const verify = internalTokenVerifier(await loadInternalVerifyingKey(subgraph), subgraph.JWT_ISSUER, 'booking', 30);
    expect(await verify(token)).toEqual(caller);
  });

  it('gives an MVR key that encrypts and decrypts a report', async () => {
    const vault = await loadReportVault(config);
    expect(vault.decrypt(vault.encrypt('{"report":1}', 'mvr_1'), 'mvr_1')).toBe('{"report":1}');
    expect(vault.keyId).toMatch(/^[0-9a-f]{16}$/);
  });

  it('gives a hop key a listening subgraph accepts, and refuses a hop signed with another', async () => {
    const app = Fastify();
    requireInternalHop(app, config.INTERNAL_HOP_KEY!, config.INTERNAL_HOP_MAX_SKEW_SECONDS);
    app.post('/graphql', async () => ({ ok: true }));
    const body = '{"query":"{ __typename }"}';
    const send = (key: string) => app.inject({ method: 'POST', url: '/graphql', payload: body,
      headers: { 'content-type': 'application/json', [INTERNAL_HOP_HEADER]: signHop(key, { method: 'POST', target: '/graphql', body }) } });
    expect((await send(config.INTERNAL_HOP_KEY!)).statusCode).toBe(200);
    expect((await send('another-key-of-at-least-32-characters')).statusCode).toBe(401);
    await app.close();
  });

  it('reads the same through a shell (set -a; . file)', async () => {
    const file = join(dir, 'keys.env');
    await writeFile(file, block);
    const print = `JSON.stringify(Object.fromEntries(${JSON.stringify(KEYS)}.map((k) => [k, process.env[k]])))`;
    const shell = spawnSync('sh', ['-c', 'set -a && . "$0" && set +a && exec "$1" -p "$2"', file, process.execPath, print], { encoding: 'utf8' });
    expect(shell.status, shell.stderr).toBe(0);
    expect(JSON.parse(shell.stdout)).toEqual(parseEnv(block));
  });

  it('writes the block to a file of its owner only, and never over an existing file', async () => {
    const file = join(dir, 'written.env');
    const written = await runNode(['subgraphs/platform/auth/keys-cli.ts', file], {});
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toBe('');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const content = await readFile(file, 'utf8');
    expect(Object.keys(parseEnv(content)).sort()).toEqual([...KEYS].sort());
    const again = await runNode(['subgraphs/platform/auth/keys-cli.ts', file], {});
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not overwritten');
    expect(await readFile(file, 'utf8')).toBe(content);
  });

  it('makes a new set each time', async () => {
    const again = parseEnv((await runNode(['subgraphs/platform/auth/keys-cli.ts'], {})).stdout);
    for (const key of KEYS) expect(again[key]).not.toBe(parseEnv(block)[key]);
  });
});
