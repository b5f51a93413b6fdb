/**
 * The IDE's sign-in at the organisation's OpenID provider (oidc-provider, a real one) with
 * authorization code + PKCE, in the project's Chromium under the page's policy: the provider is
 * trusted with the IDE's client id, the page offers it, the user signs in on the provider's pages,
 * comes back to /graphql and runs a field that needs a token with the provider's token; when that
 * token expires the user is asked to sign in again. An answer the tab did not ask for is refused.
 */
import { decodeJwt } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { clipboardContext, fillVariables, installClock, openIde, responseText, runOperation, showSignIn } from '../support/ide-page.ts';
import { signInAtProvider, startOidcProvider, type TestProvider } from '../support/oidc-provider-server.ts';
import { adminToken, DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';

const RESOURCE = 'https://graph.fleet.example/';
const IDE_CLIENT_ID = 'graphql-ide';
const USER_ID = 'ide-provider-1';
/** The provider's access tokens live ten minutes. */
const TOKEN_TTL_S = 600;

let t: TestStack;
let browser: Browser;
let provider: TestProvider;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['scoring'], env: { OIDC_ALLOW_LOOPBACK: 'true' } });
  provider = await startOidcProvider([{ clientId: IDE_CLIENT_ID, redirectUri: `${t.url}/graphql` }], RESOURCE, TOKEN_TTL_S);
  const admin = await adminToken(t);
  const trusted = await t.request('POST', '/platform/admin/v1/issuers', {
    token: admin, body: { issuer: provider.issuer, organisation: DEFAULT_CLIENT.org, audience: RESOURCE, ideClientId: IDE_CLIENT_ID, ideName: 'Acme SSO' },
  });
  expect(trusted.status, JSON.stringify(trusted.body)).toBe(201);
  const seeded = await t.graphql(`mutation { createUser(input: { userId: "${USER_ID}", homeZip: "60601" }) { userId } }`);
  expect(seeded.errors ?? []).toEqual([]);
  browser = await launchBrowser();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
  provider?.close();
});

/** The ScoringUser tab with the seeded user, run. */
async function runScoringUser(page: Page) {
  await page.getByRole('tab', { name: 'ScoringUser' }).click();
  await fillVariables(page, `{ "userId": "${USER_ID}" }`);
  await runOperation(page);
}

describe('the IDE signs in at the organisation\'s OpenID provider', () => {
  it('with code + PKCE, runs a field that needs a token with the provider\'s token, and asks again once it expires', async () => {
    const context = await clipboardContext(browser);
    const { page, violations } = await openIde(context, `${t.url}/graphql`);
    const policy = (await page.request.get(`${t.url}/graphql`, { headers: { accept: 'text/html' } })).headers()['content-security-policy'];
    expect(policy).toMatch(new RegExp(`connect-src 'self' ws://[^;]+ ${provider.issuer.replace(/\./g, '\\.')}(;|$)`));
    const bearers: string[] = [];
    const authorizations: URL[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && request.url() === `${t.url}/graphql`) bearers.push(request.headers().authorization ?? '');
      if (request.url().startsWith(`${provider.issuer}/auth?`)) authorizations.push(new URL(request.url()));
    });
    // Time is the page's to move (it flows as usual until moved): the token's end comes at once.
    await installClock(page);

    await showSignIn(page);
    await page.getByRole('button', { name: 'Sign in with Acme SSO' }).click();
    await page.waitForURL((url) => url.href.startsWith(provider.issuer));
    expect(authorizations).toHaveLength(1);
    expect(Object.fromEntries(authorizations[0]!.searchParams)).toMatchObject({
      response_type: 'code', client_id: IDE_CLIENT_ID, redirect_uri: `${t.url}/graphql`, code_challenge_method: 'S256',
      code_challenge: expect.stringMatching(/^[\w-]{43}$/), state: expect.stringMatching(/^[\w-]{43}$/),
      nonce: expect.stringMatching(/^[\w-]{43}$/), resource: RESOURCE,
    });
    await signInAtProvider(page, 'ann@example.com');
    await page.waitForURL(`${t.url}/graphql`, { timeout: 20_000 });
    await expect.poll(() => page.getByRole('status').innerText(), { timeout: 20_000 }).toContain('Signed in as ann@example.com (Acme SSO)');
    // The code and state left the URL; the pending sign-in left storage; the token is in no storage.
    expect(await page.evaluate('location.search + JSON.stringify({ ...sessionStorage }) + JSON.stringify({ ...localStorage })'))
      .not.toMatch(/code=|verifier|eyJ/);

    await runScoringUser(page);
    await expect.poll(() => responseText(page), { timeout: 15_000 }).toContain(`"userId": "${USER_ID}"`);
    const sent = bearers.at(-1)!.replace(/^Bearer /, '');
    expect(decodeJwt(sent)).toMatchObject({ iss: provider.issuer, aud: RESOURCE, sub: 'ann@example.com' });

    await page.clock.fastForward(`${TOKEN_TTL_S / 60}:01`);
    await expect.poll(() => page.locator('.ide-error').innerText(), { timeout: 10_000 }).toMatch(/sign-in with Acme SSO has expired: sign in again/);
    expect(await page.getByRole('button', { name: 'Sign in with Acme SSO' }).isVisible()).toBe(true);
    await runOperation(page);
    await expect.poll(() => responseText(page), { timeout: 15_000 }).toContain('UNAUTHENTICATED');
    expect(bearers.at(-1)).toBe('');
    expect(violations).toEqual([]);
    await context.close();
  }, 120_000);

  it('refuses an answer whose state is not the one this tab sent, and exchanges no code', async () => {
    const context = await clipboardContext(browser);
    const { page, violations } = await openIde(context, `${t.url}/graphql`);
    const exchanges: string[] = [];
    context.on('request', (request) => { if (request.url().startsWith(`${provider.issuer}/token`)) exchanges.push(request.url()); });
    await showSignIn(page);
    await page.getByRole('button', { name: 'Sign in with Acme SSO' }).click();
    await page.waitForURL((url) => url.href.startsWith(provider.issuer));
    // An attacker's link back to the IDE, with a code of theirs and a state of their own.
    await page.goto(`${t.url}/graphql?code=attackers-code&state=forged&iss=${encodeURIComponent(provider.issuer)}`);
    await expect.poll(() => page.locator('.ide-error').innerText(), { timeout: 20_000 })
      .toBe('Sign-in failed: the answer does not belong to a sign-in this tab started');
    expect(await page.evaluate('location.search + JSON.stringify({ ...sessionStorage })')).toBe('{}');
    expect(exchanges).toEqual([]);
    expect(violations).toEqual([]);
    await context.close();
  }, 120_000);
});
