/**
 * The gateway's internal token (subgraphs/platform/auth/internal-token.ts): what it carries, how the gateway
 * reuses it, and the key rules. The HTTP refusals are in test/gateway/exposure.test.ts.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader, exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { loadInternalSigningKey, loadInternalVerifyingKey } from '../../subgraphs/platform/auth/keys.ts';
import { INTERNAL_TOKEN_LIFETIME_SECONDS, internalTokenMinter, internalTokenVerifier } from '../../subgraphs/platform/auth/internal-token.ts';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';

let dir: string;
beforeAll(async () => { dir = await mkdtemp(join(tmpdir(), 'frg-internal-token-')); });
afterAll(async () => { await rm(dir, { recursive: true, force: true }); });

const caller: Caller = { clientId: 'client-1', orgId: 'org.with*odd>chars', scopes: ['b2b', 'roadside'] };

describe('the internal token', () => {
  it('carries client, organisation, scopes and, for a user, the user id, for one subgraph for 60 s', async () => {
    const config = loadConfig({ DATA_DIR: join(dir, 'embedded') });
    const mint = internalTokenMinter(await loadInternalSigningKey(config), config.JWT_ISSUER);
    const verify = internalTokenVerifier(await loadInternalVerifyingKey(config), config.JWT_ISSUER, 'scoring', 30);
    const token = await mint(caller, 'scoring');
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'EdDSA', typ: 'internal+jwt' });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({ sub: 'client-1', org: caller.orgId, scope: 'b2b roadside', aud: 'subgraph:scoring', iss: config.JWT_ISSUER });
    expect(claims.exp! - claims.iat!).toBe(INTERNAL_TOKEN_LIFETIME_SECONDS);
    expect(claims).not.toHaveProperty('uid');
    expect(await verify(token)).toEqual(caller);
    const user = { ...caller, userId: 'user-7' };
    const userToken = await mint(user, 'scoring');
    expect(decodeJwt(userToken).uid).toBe('user-7');
    expect(await verify(userToken)).toEqual(user);
  });

  it('is signed once per caller and subgraph while it has more than half its life left', async () => {
    const mint = internalTokenMinter((await generateKeyPair('EdDSA')).privateKey, 'issuer');
    const first = await mint(caller, 'booking');
    expect(await mint({ ...caller }, 'booking')).toBe(first);
    expect(await mint(caller, 'scoring')).not.toBe(first);
    expect(await mint({ ...caller, scopes: ['b2b'] }, 'booking')).not.toBe(first);
    expect(await mint({ ...caller, orgId: 'other' }, 'booking')).not.toBe(first);
    expect(await mint({ ...caller, userId: 'u' }, 'booking')).not.toBe(first);
  });
});

describe('its keys', () => {
  it('the embedded default generates one pair under DATA_DIR, which the gateway and its subgraphs share', async () => {
    const config = loadConfig({ DATA_DIR: join(dir, 'shared') });
    const token = await internalTokenMinter(await loadInternalSigningKey(config), 'i')(caller, 'risk');
    expect(await internalTokenVerifier(await loadInternalVerifyingKey(config), 'i', 'risk', 0)(token)).toEqual(caller);
    expect(await readdir(join(dir, 'shared', 'keys'))).toEqual(['internal-token-private.pem']);
  });

  it('a subgraph given the public key alone generates nothing; the gateway refuses a public key without its private one, or another\'s', async () => {
    const pair = await generateKeyPair('EdDSA', { extractable: true });
    const other = await generateKeyPair('EdDSA', { extractable: true });
    const publicPem = await exportSPKI(pair.publicKey);
    const subgraph = loadConfig({ DATA_DIR: join(dir, 'subgraph'), INTERNAL_TOKEN_PUBLIC_KEY: publicPem });
    await loadInternalVerifyingKey(subgraph);
    await expect(readdir(join(dir, 'subgraph'))).rejects.toThrow(/ENOENT/);
    await expect(loadInternalSigningKey(subgraph)).rejects.toThrow(/INTERNAL_TOKEN_PUBLIC_KEY is set without INTERNAL_TOKEN_PRIVATE_KEY/);
    const mismatched = loadConfig({ DATA_DIR: dir, INTERNAL_TOKEN_PUBLIC_KEY: publicPem, INTERNAL_TOKEN_PRIVATE_KEY: await exportPKCS8(other.privateKey) });
    await expect(loadInternalSigningKey(mismatched)).rejects.toThrow(/not the public key of INTERNAL_TOKEN_PRIVATE_KEY/);
    const matched = loadConfig({ DATA_DIR: dir, INTERNAL_TOKEN_PUBLIC_KEY: publicPem, INTERNAL_TOKEN_PRIVATE_KEY: await exportPKCS8(pair.privateKey) });
    const token = await internalTokenMinter(await loadInternalSigningKey(matched), 'i')(caller, 'risk');
    expect(await internalTokenVerifier(await loadInternalVerifyingKey(subgraph), 'i', 'risk', 0)(token)).toEqual(caller);
  });
});
