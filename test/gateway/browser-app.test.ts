/**
 * Acceptance in a real browser: a small Apollo Client 4 frontend (browser-app/driver-profile.js,
 * bundled here by esbuild) served from another loopback origin, in the project's headless Chromium.
 * With `new InMemoryCache()` it loads a driver profile in one query, every entity normalised; an
 * `updateUser` shows on screen with no refetch; an origin not in CORS_ORIGINS fails clearly.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { sourceBFull } from '../scoring/mvr-fixtures.ts';

const USER_ID = 'browser-driver-1';
const VINS = ['1HGCM82633A0B0001', '1HGCM82633A0B0002', '1HGCM82633A0B0003'];

/** Serves the page and its bundle on an ephemeral loopback port; the page's origin names it `localhost`. */
async function servePage(bundle: string, settings: () => object): Promise<{ origin: string; server: Server }> {
  const server = createServer((request, response) => {
    if (request.url === '/app.js') return response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle);
    if (request.url !== '/') return response.writeHead(404).end();
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Driver profile</title></head>
<body data-state="loading">
<script id="config" type="application/json">${JSON.stringify(settings()).replace(/</g, '\\u003c')}</script>
<p>Home ZIP: <span id="home-zip"></span> <input id="zip"> <button id="save">Save</button></p>
<p>Score: <span id="score"></span></p>
<ul id="bookings"></ul>
<p id="error"></p>
<script src="/app.js"></script>
</body></html>`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { origin: `http://localhost:${(server.address() as AddressInfo).port}`, server };
}

let t: TestStack;
let browser: Browser;
let allowed: { origin: string; server: Server };
let refused: { origin: string; server: Server };

beforeAll(async () => {
  const bundled = await build({
    entryPoints: [new URL('./browser-app/driver-profile.js', import.meta.url).pathname],
    bundle: true, write: false, format: 'iife', platform: 'browser', target: 'chrome120', logLevel: 'silent',
    // Apollo Client's development build, as a dev server serves it: its cache warnings reach the console.
    conditions: ['development'],
  });
  const bundle = bundled.outputFiles[0]!.text;
  const settings = () => ({ graphqlUrl: `${t.url}/graphql`, token: t.token, userId: USER_ID });
  allowed = await servePage(bundle, settings);
  refused = await servePage(bundle, settings);
  t = await startTestStack({ subgraphs: ['booking', 'scoring'], env: { CORS_ORIGINS: allowed.origin } });
  const seeded = [
    await t.graphql(`mutation { createUser(input: { userId: "${USER_ID}", dateOfBirth: "1985-04-12", homeZip: "60601" }) { userId } }`),
    await t.graphql(`mutation($r: JSON) { createMvr(userId: "${USER_ID}", source: SOURCE_B, report: $r) { id } }`, { r: sourceBFull() }),
  ];
  for (const [i, vin] of VINS.entries()) {
    seeded.push(await t.graphql(`mutation { createVehicle(vin: "${vin}", deviceId: "browser-dev-${i}") { vin } }`));
    seeded.push(await t.graphql(`mutation { startBooking(input: { vin: "${vin}", bookingId: "browser-bk-${i}", userId: "${USER_ID}", startTimestamp: ${1_800_000_000 + i * 3600} }) { bookingId } }`));
  }
  expect(seeded.flatMap((r) => r.errors ?? [])).toEqual([]);
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
  allowed?.server.close();
  refused?.server.close();
});

interface Watched { page: Page; graphqlRequests: string[]; console: string[] }

/** Opens the page at `origin`, recording its requests to /graphql and its console warnings and errors. */
async function open(origin: string): Promise<Watched> {
  const page = await browser.newPage();
  const watched: Watched = { page, graphqlRequests: [], console: [] };
  page.on('request', (request) => { if (request.url().startsWith(`${t.url}/graphql`)) watched.graphqlRequests.push(`${request.method()} ${request.postDataJSON()?.operationName ?? ''}`); });
  page.on('console', (message) => { if (['warning', 'error'].includes(message.type())) watched.console.push(message.text()); });
  await page.goto(origin, { waitUntil: 'load' });
  return watched;
}

const state = (page: Page) => page.evaluate(() => (globalThis as unknown as { document: { body: { dataset: { state?: string } } } }).document.body.dataset.state);

describe('a browser app on an origin in CORS_ORIGINS', () => {
  it('loads a driver profile in one query with every entity normalised, and shows updateUser with no refetch', async () => {
    const { page, graphqlRequests, console: messages } = await open(allowed.origin);
    await expect.poll(() => state(page), { timeout: 20_000 }).toBe('ready');
    expect(await page.locator('#home-zip').innerText()).toBe('60601');
    expect(await page.locator('#score').innerText()).toMatch(/^\d+$/);
    const bookings = await page.locator('#bookings li').allInnerTexts();
    expect(bookings).toHaveLength(VINS.length);
    for (const vin of VINS) expect(bookings.some((line) => line.endsWith(vin))).toBe(true);
    expect(graphqlRequests).toEqual(['POST DriverProfile']);

    const cache = await page.evaluate(() => (globalThis as unknown as { cacheContents(): Record<string, Record<string, unknown>> }).cacheContents());
    const normalised = Object.keys(cache).filter((key) => !key.startsWith('ROOT_'));
    const expected = [`User:User:${USER_ID}`, ...VINS.flatMap((vin, i) => [`Booking:Booking:browser-bk-${i}`, `Vehicle:Vehicle:${vin}`])];
    expect(normalised.sort()).toEqual(expected.sort());
    console.log(`driver-profile cache: ${normalised.length}/${expected.length} entities normalised; keys: ${Object.keys(cache).join(', ')}`);

    await page.locator('#zip').fill('94110');
    await page.locator('#save').click();
    await expect.poll(() => state(page)).toBe('saved');
    await expect.poll(() => page.locator('#home-zip').innerText()).toBe('94110');
    expect(graphqlRequests).toEqual(['POST DriverProfile', 'POST UpdateHomeZip']);
    expect(messages).toEqual([]);
    await page.close();
  }, 60_000);
});

describe('a browser app on an origin not in CORS_ORIGINS', () => {
  it('fails clearly: the page says it could not reach the graph and the browser names CORS', async () => {
    const { page, console: messages } = await open(refused.origin);
    await expect.poll(() => state(page), { timeout: 20_000 }).toBe('error');
    expect(await page.locator('#error').innerText()).toMatch(/Could not reach the graph at .*\/graphql: Failed to fetch/);
    expect(messages.join('\n')).toMatch(new RegExp(`from origin '${refused.origin}' has been blocked by CORS policy`));
    await page.close();
  }, 60_000);
});
