/**
 * The frontend team's path, in the project's Chromium: a single-page app signs its user in at the
 * organisation's OpenID provider (oidc-provider, the certified implementation, on a loopback port)
 * with authorization code + PKCE, then queries the graph with Apollo Client 4 and the user's JWT
 * access token. The gateway trusts the provider for org-a (`npm run issuers -- trust`'s admin API).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchBrowser } from '../../support/browser.ts';
import { signInAtProvider, startOidcProvider, type TestProvider } from '../../support/oidc-provider-server.ts';
import { adminToken, DEFAULT_CLIENT, startTestStack, type TestStack } from '../../support/stack.ts';

const RESOURCE = 'https://graph.fleet.example/';
const CLIENT_ID = 'fleet-spa';
const USER_ID = 'spa-driver-1';

let t: TestStack;
let browser: Browser;
let app: { origin: string; server: Server };
let provider: TestProvider;

/** The app: its page (settings inline) on `/` and `/callback`, and its bundle. */
async function serveApp(settings: () => object): Promise<{ origin: string; server: Server }> {
  const bundle = (await build({
    entryPoints: [new URL('../browser-app/spa-sign-in.js', import.meta.url).pathname],
    bundle: true, write: false, format: 'iife', platform: 'browser', target: 'chrome120', logLevel: 'silent',
  })).outputFiles[0]!.text;
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    if (path === '/app.js') return response.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    if (path !== '/' && path !== '/callback') return response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Fleet</title></head><body data-state="loading">
<script id="config" type="application/json">${JSON.stringify(settings()).replace(/</g, '\\u003c')}</script>
<button id="sign-in">Sign in</button> <p>Home ZIP: <span id="home-zip"></span></p> <p id="error"></p>
<script src="/app.js"></script></body></html>`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { origin: `http://localhost:${(server.address() as AddressInfo).port}`, server };
}

beforeAll(async () => {
  app = await serveApp(() => ({ issuer: provider.issuer, clientId: CLIENT_ID, resource: RESOURCE, graphqlUrl: `${t.url}/graphql`, userId: USER_ID }));
  provider = await startOidcProvider([{ clientId: CLIENT_ID, redirectUri: `${app.origin}/callback` }], RESOURCE);
  t = await startTestStack({ subgraphs: ['scoring'], env: { OIDC_ALLOW_LOOPBACK: 'true', CORS_ORIGINS: app.origin } });
  const admin = await adminToken(t);
  const trusted = await t.request('POST', '/platform/admin/v1/issuers', { token: admin, body: { issuer: provider.issuer, organisation: DEFAULT_CLIENT.org, audience: RESOURCE } });
  expect(trusted.status, JSON.stringify(trusted.body)).toBe(201);
  const seeded = await t.graphql(`mutation { createUser(input: { userId: "${USER_ID}", homeZip: "60601" }) { userId } }`);
  expect(seeded.errors ?? []).toEqual([]);
  browser = await launchBrowser();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
  app?.server.close();
  provider?.close();
});

it("signs a user in with authorization code + PKCE and reads the organisation's graph with Apollo Client and the user's token", async () => {
  const page = await browser.newPage();
  const graphql: string[] = [];
  page.on('request', (request) => {
    if (request.url().startsWith(`${t.url}/graphql`) && request.method() === 'POST') graphql.push(request.headers().authorization ?? '');
  });
  const state = () => page.evaluate(() => (globalThis as unknown as { document: { body: { dataset: { state?: string } } } }).document.body.dataset.state);
  await page.goto(app.origin, { waitUntil: 'domcontentloaded' });
  await expect.poll(state, { timeout: 20_000 }).toBe('signed-out');
  await page.click('#sign-in');
  // The provider's own pages: sign-in (any login in its development interactions), then consent.
  await signInAtProvider(page, 'ann@example.com');
  await page.waitForURL(`${app.origin}/`, { timeout: 20_000 });
  await expect.poll(state, { timeout: 20_000 }).toMatch(/ready|error/);
  expect(await page.locator('#error').innerText()).toBe('');
  expect(await page.locator('#home-zip').innerText()).toBe('60601');
  // The graph saw the provider's token: a JWT for the graph's resource, from the provider, about the user.
  expect(graphql).toHaveLength(1);
  const { decodeJwt } = await import('jose');
  expect(decodeJwt(graphql[0]!.replace(/^Bearer /, ''))).toMatchObject({ iss: provider.issuer, aud: RESOURCE, sub: 'ann@example.com' });
  await page.close();
}, 120_000);
