/**
 * Operators trust and distrust organisations' issuers with `npm run issuers` (through the gateway's
 * admin API); a distrust refuses the issuer's tokens on every gateway process within 2 s.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildGateway, type Gateway } from '../../../gateway/app.ts';
import { IssuerStore } from '../../../gateway/auth/issuers.ts';
import { runNode } from '../../support/child-server.ts';
import { startTestIssuer, type TestIssuer } from '../../support/oidc-issuer.ts';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../../support/stack.ts';

const ISSUERS = '/platform/admin/v1/issuers';
let t: TestStack;
let issuer: TestIssuer;
let other: Gateway;
let otherUrl: string;

const issuers = (...args: string[]) => runNode(['gateway/auth/issuers-cli.ts', ...args, '--url', t.url, '--client-id', DEFAULT_CLIENT.id, '--client-secret', DEFAULT_CLIENT.secret], {});
/** 403: the gate accepted the token (not an operator's); 401: refused. */
const gateStatus = async (base: string, token: string) =>
  (await fetch(`${base}/platform/admin/v1/clients`, { headers: { authorization: `Bearer ${token}` } })).status;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: [], env: { OIDC_ALLOW_LOOPBACK: 'true' } });
  issuer = await startTestIssuer();
  // A second gateway process on the same database, with caches of its own.
  const { stack } = t;
  other = await buildGateway({ config: t.config, db: stack.db, revocation: stack.revocation, subgraphUrls: stack.subgraphUrls, bus: stack.bus });
  otherUrl = await other.app.listen({ host: '127.0.0.1', port: 0 });
}, 240_000);
afterAll(async () => {
  await other?.close();
  await t?.close();
  await issuer?.close();
});

describe('npm run issuers', () => {
  it('trusts an issuer for an organisation and audience, lists it, and distrusts it everywhere within 2 s', async () => {
    const trusted = await issuers('trust', issuer.url, '--org', 'org-a', '--audience', 'fleet-app',
      '--scopes-claim', 'roles', '--map', 'fleet-manager=b2b,dispatcher=roadside,dispatcher=b2b', '--ide-client-id', 'graphql-ide', '--ide-name', 'Acme SSO');
    expect(trusted.code, trusted.stderr).toBe(0);
    const registration = JSON.parse(trusted.stdout) as { id: string };
    expect(registration).toMatchObject({
      id: expect.stringMatching(/^issuer_/), issuer: issuer.url, organisation: 'org-a', audience: 'fleet-app', userClaim: 'sub',
      scopesClaim: 'roles', scopeMap: { 'fleet-manager': ['b2b'], dispatcher: ['roadside', 'b2b'] }, scopes: [],
      ideClientId: 'graphql-ide', ideName: 'Acme SSO',
    });
    const listed = await issuers('list');
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: registration.id })]);

    const token = await issuer.sign({ sub: 'ann@example.com', aud: 'fleet-app', roles: ['dispatcher'] });
    expect(await gateStatus(t.url, token)).toBe(403);
    expect(await gateStatus(otherUrl, token)).toBe(403);

    const distrusted = await issuers('distrust', registration.id);
    expect(distrusted.code, distrusted.stderr).toBe(0);
    expect(await gateStatus(t.url, token)).toBe(401);
    await sleep(2_000);
    expect(await gateStatus(otherUrl, token)).toBe(401);
    expect(JSON.parse((await issuers('list')).stdout)).toEqual([]);
    const again = await issuers('distrust', registration.id);
    expect(again).toMatchObject({ code: 1, stderr: expect.stringMatching(/404/) });
  }, 120_000);

  it('is for operators only', async () => {
    const ordinary = await t.request('POST', ISSUERS, { token: t.token, body: { issuer: issuer.url, organisation: 'org-a', audience: 'x' } });
    expect(ordinary).toMatchObject({ status: 403, body: { code: 'FORBIDDEN' } });
    expect((await t.request('GET', ISSUERS)).status).toBe(401);
  });
});

describe('what can be trusted', () => {
  const store = () => new IssuerStore(t.stack.db.orm.em, { allowLoopback: false });
  const refusal = (request: Parameters<IssuerStore['trust']>[0]) => store().trust(request).then(() => 'trusted', (error: Error) => error.message);
  const base = { organisation: 'org-a', audience: 'aud' };

  it('public https issuers only, loopback only with OIDC_ALLOW_LOOPBACK', async () => {
    expect(await refusal({ ...base, issuer: issuer.url })).toMatch(/loopback.*issuers must be public|https/);
    expect(await refusal({ ...base, issuer: 'https://10.1.2.3/realms/acme' })).toMatch(/private address; issuers must be public/);
    expect(await refusal({ ...base, issuer: 'https://[::ffff:169.254.169.254]' })).toMatch(/issuers must be public/);
    expect(await refusal({ ...base, issuer: 'http://login.example.com' })).toMatch(/https/);
    expect(await refusal({ ...base, issuer: 'https://login.example.com?tenant=1' })).toMatch(/query string/);
  });

  it('no admin scope for end users, and a scopes claim with its map', async () => {
    const issuerUrl = 'https://login.example.com';
    expect(await refusal({ ...base, issuer: issuerUrl, scopes: ['admin'] })).toMatch(/admin/);
    expect(await refusal({ ...base, issuer: issuerUrl, scopesClaim: 'roles', scopeMap: { ops: ['admin'] } })).toMatch(/admin/);
    expect(await refusal({ ...base, issuer: issuerUrl, scopesClaim: 'roles' })).toMatch(/go together/);
    expect(await refusal({ ...base, issuer: issuerUrl, userClaim: 'a b' })).toMatch(/claim name/);
  });

  it("the IDE's client id, and a button name only with it", async () => {
    const issuerUrl = 'https://login.example.com';
    expect(await refusal({ ...base, issuer: issuerUrl, ideName: 'Acme' })).toMatch(/needs ideClientId/);
    expect(await refusal({ ...base, issuer: issuerUrl, ideClientId: 'ide', ideName: 'A\nB' })).toMatch(/printable/);
    expect(await refusal({ ...base, issuer: issuerUrl, ideClientId: ' ' })).toMatch(/ideClientId must be 1 to 255/);
  });
});
