/**
 * One issuer's keys over time (the clock moved by the test, the issuer a real loopback server):
 * kept 10 minutes, fetched again on an unknown kid at most every 30 s, a failure remembered as long.
 */
import { decodeProtectedHeader, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { IssuerKeys, KEYS_COOLDOWN_MS, KEYS_MAX_AGE_MS } from '../../../gateway/auth/oidc/issuer-keys.ts';
import { startTestIssuer, type TestIssuer } from '../../support/oidc-issuer.ts';

let issuer: TestIssuer;
let clock = 1_000_000;
let keys: IssuerKeys;
const failures: string[] = [];
beforeAll(async () => {
  issuer = await startTestIssuer();
  keys = new IssuerKeys(issuer.url, { allowLoopback: true }, (error) => failures.push(error.message), () => clock);
});
afterAll(async () => { await issuer.close(); });

const verifies = async (getKey: JWTVerifyGetKey | null, token: string) =>
  !!getKey && jwtVerify(token, getKey).then(() => true, () => false);

it('keeps the keys 10 minutes and picks up a rotated key on its kid, at most once per 30 s', async () => {
  const first = await issuer.sign({ sub: 'ann' });
  expect(await verifies(await keys.current(), first)).toBe(true);
  expect(issuer.hits.jwks).toBe(1);
  clock += KEYS_MAX_AGE_MS - 1;
  await keys.current();
  expect(issuer.hits.jwks).toBe(1);

  const rotatedKey = await issuer.addKey('key-2');
  const rotated = await issuer.sign({ sub: 'ann' }, { key: rotatedKey, kid: 'key-2' });
  expect(decodeProtectedHeader(rotated).kid).toBe('key-2');
  expect(await verifies(await keys.current(), rotated)).toBe(false);
  // Past the cool-down since the last fetch: fetched again, once.
  expect(await verifies(await keys.refreshed(), rotated)).toBe(true);
  expect(issuer.hits.jwks).toBe(2);
  expect(await keys.refreshed()).toBeNull();
  clock += KEYS_COOLDOWN_MS - 1;
  expect(await keys.refreshed()).toBeNull();
  expect(issuer.hits.jwks).toBe(2);
  clock += 1;
  expect(await keys.refreshed()).not.toBeNull();
  expect(issuer.hits.jwks).toBe(3);
});

it('uses the keys it has while the issuer fails, and asks the issuer again only after the cool-down', async () => {
  const token = await issuer.sign({ sub: 'ann' });
  issuer.behaviour = 'garbage';
  clock += KEYS_MAX_AGE_MS;
  expect(await verifies(await keys.current(), token)).toBe(true);
  expect(issuer.hits.jwks).toBe(4);
  expect(failures).toEqual([expect.stringMatching(/not a JSON Web Key Set/)]);
  await keys.current();
  expect(issuer.hits.jwks).toBe(4);
  issuer.behaviour = 'keys';
  clock += KEYS_COOLDOWN_MS;
  expect(await verifies(await keys.current(), token)).toBe(true);
  expect(issuer.hits.jwks).toBe(5);
});
