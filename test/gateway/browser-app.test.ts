/**
 * Acceptance in a real browser: a small Apollo Client 4 frontend (browser-app/, bundled here by
 * esbuild) served from another loopback origin, in the project's headless Chromium.
 * The driver profile (driver-profile.js), with `new InMemoryCache()`, loads in one query, every
 * entity normalised; an `updateUser` shows on screen with no refetch. The rescue tracker
 * (rescue-tracker.js) dispatches a rescue and shows each status the provider commits, pushed over
 * GraphQLWsLink or graphql-sse's client, and, paused and resumed, resumes after the last event it got
 * (the webhooks area runs too: it keeps the event history subscriptions resume from); a raw fetch of the
 * SSE stream from the page resumes with Last-Event-ID. A screen (deferred-map.js) shows the driver from
 * the primary part of an @defer query before its deferred Risk Index map (HttpLink and
 * Defer20220824Handler). From an origin not in CORS_ORIGINS both fail clearly.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { subscriptionsHeld, untilHeld } from '../support/subscriptions-held.ts';
import { sourceBFull } from '../scoring/mvr-fixtures.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { runner } from '../../subgraphs/platform/db/run.ts';
import { CHICAGO, dispatch, provision, session } from '../roadside/helpers.ts';

const USER_ID = 'browser-driver-1';
const VINS = ['1HGCM82633A0B0001', '1HGCM82633A0B0002', '1HGCM82633A0B0003'];

/** One page of the app: its script's path, the bundle served there, and the page's HTML around its settings. */
interface AppPage { script: string; bundle: string; html(config: string, script: string): string }

/**
 * Serves the app's pages on an ephemeral loopback port (the page's origin names it `localhost`): each
 * page with its settings (`settings(path, query)`) inline as #config, and its bundle.
 */
async function serveApp(pages: Record<string, AppPage>, settings: (path: string, query: URLSearchParams) => object): Promise<{ origin: string; server: Server }> {
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const script = Object.values(pages).find((p) => p.script === url.pathname);
    if (script) return response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script.bundle);
    const page = pages[url.pathname];
    if (!page) return response.writeHead(404).end();
    const config = JSON.stringify(settings(url.pathname, url.searchParams)).replace(/</g, '\\u003c');
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page.html(config, page.script));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { origin: `http://localhost:${(server.address() as AddressInfo).port}`, server };
}

const profilePage = (bundle: string): AppPage => ({
  script: '/profile.js', bundle, html: (config, script) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Driver profile</title></head>
<body data-state="loading">
<script id="config" type="application/json">${config}</script>
<p>Home ZIP: <span id="home-zip"></span> <input id="zip"> <button id="save">Save</button></p>
<p>Score: <span id="score"></span></p>
<ul id="bookings"></ul>
<p id="error"></p>
<script src="${script}"></script>
</body></html>`,
});

const rescuePage = (bundle: string): AppPage => ({
  script: '/rescue.js', bundle, html: (config, script) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Track my rescue</title></head>
<body data-state="dispatching">
<script id="config" type="application/json">${config}</script>
<p>Rescue <span id="req-id"></span></p>
<ol id="statuses"></ol>
<p id="error"></p>
<p>Connection closed: <span id="closed"></span></p>
<button id="pause">Pause live updates</button> <button id="resume">Resume</button>
<script src="${script}"></script>
</body></html>`,
});

const mapPage = (bundle: string): AppPage => ({
  script: '/map.js', bundle, html: (config, script) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Driver and area map</title></head>
<body data-state="loading">
<script id="config" type="application/json">${config}</script>
<p>Home ZIP: <span id="home-zip"></span></p>
<p>Map: <span id="map-size"></span> characters of SVG</p>
<p id="error"></p>
<script src="${script}"></script>
</body></html>`,
});

/** Bundles a page script of browser-app/ for the browser. */
async function bundle(file: string): Promise<string> {
  const bundled = await build({
    entryPoints: [new URL(`./browser-app/${file}`, import.meta.url).pathname],
    bundle: true, write: false, format: 'iife', platform: 'browser', target: 'chrome120', logLevel: 'silent',
    // Apollo Client's development build, as a dev server serves it: its cache warnings reach the console.
    conditions: ['development'],
  });
  return bundled.outputFiles[0]!.text;
}

let t: TestStack;
let browser: Browser;
let allowed: { origin: string; server: Server };
let refused: { origin: string; server: Server };

beforeAll(async () => {
  const pages = {
    '/': profilePage(await bundle('driver-profile.js')), '/rescue': rescuePage(await bundle('rescue-tracker.js')), '/map': mapPage(await bundle('deferred-map.js')),
  };
  const settings = (path: string, query: URLSearchParams) => (path === '/rescue'
    ? { graphqlUrl: `${t.url}/graphql`, streamUrl: `${t.url}/graphql/stream`, token: t.token, sessionId: query.get('session'), reqId: query.get('reqId'), transport: query.get('transport'), location: CHICAGO }
    : { graphqlUrl: `${t.url}/graphql`, token: t.token, userId: USER_ID, wkt: 'POINT(-87.6298 41.8781)' });
  allowed = await serveApp(pages, settings);
  refused = await serveApp(pages, settings);
  const subgraphs = ['booking', 'scoring', 'roadside', 'risk', 'webhooks'];
  t = await startTestStack({ subgraphs, env: { CORS_ORIGINS: allowed.origin } });
  await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
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

interface Watched { page: Page; graphqlRequests: string[]; streamRequests: string[]; sockets: string[]; console: string[] }

/**
 * Opens `path` of the app at `origin`, recording its requests to /graphql and /graphql/stream, the
 * WebSockets it opens, and its console warnings and errors.
 */
async function open(origin: string, path = '/'): Promise<Watched> {
  const page = await browser.newPage();
  const watched: Watched = { page, graphqlRequests: [], streamRequests: [], sockets: [], console: [] };
  page.on('request', (request) => {
    const list = { [`${t.url}/graphql`]: watched.graphqlRequests, [`${t.url}/graphql/stream`]: watched.streamRequests }[request.url().split('?')[0]!];
    list?.push(`${request.method()} ${request.postDataJSON()?.operationName ?? ''}`);
  });
  page.on('websocket', (socket) => { watched.sockets.push(socket.url()); });
  page.on('console', (message) => { if (['warning', 'error'].includes(message.type())) watched.console.push(message.text()); });
  await page.goto(`${origin}${path}`, { waitUntil: 'load' });
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

describe('a screen with a deferred Risk Index map (Apollo Client 4, Defer20220824Handler)', () => {
  it('shows the driver first, from the primary part, and the map when its deferred part arrives', async () => {
    const { page, graphqlRequests, console: messages } = await open(allowed.origin, '/map');
    await expect.poll(async () => `${await state(page)} ${await page.locator('#error').innerText()}`, { timeout: 30_000 }).toBe('map ');
    const emitted = await page.evaluate(() => (globalThis as unknown as { emissions: { dataState: string; user: boolean; map: boolean }[] }).emissions);
    // The loading state first, then what the parts brought.
    const emissions = emitted.filter((e) => e.dataState !== 'empty');
    expect(emissions[0]).toEqual({ dataState: 'streaming', user: true, map: false });
    expect(emissions.at(-1)).toEqual({ dataState: 'complete', user: true, map: true });
    expect(await page.locator('#home-zip').innerText()).toMatch(/^\d{5}$/);
    expect(Number(await page.locator('#map-size').innerText())).toBeGreaterThan(1000);
    expect(graphqlRequests).toEqual(['POST DriverWithMap']);
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

const STATUSES = ['EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED'];
const shown = (page: Page) => page.locator('#statuses li').allInnerTexts();
/** The provider moves rescue `reqId` to `status`: one committed event. */
const moveRescue = async (reqId: string, status: string) => {
  const moved = await t.graphql(`mutation($id: ID!, $st: RescueStatus!) {
    updateRescueStatus(input: { reqId: $id, status: $st, latitude: 41.88, longitude: -87.636 }) { status }
  }`, { id: reqId, st: status });
  expect(moved.data).toEqual({ updateRescueStatus: { status: 'OK' } });
};

describe('a rescue tracked live from an origin in CORS_ORIGINS', () => {
  const transports = [['ws', 'GraphQLWsLink (graphql-ws)'], ['http', "HttpLink's multipart subscriptions"], ['sse', "graphql-sse's client"]] as const;
  for (const [transport, how] of transports) {
    it(`shows each status over ${how} as the provider's updates commit, in order, none missing`, async () => {
      const member = await provision(t, t.token);
      const sessionId = await session(t, t.token, [{ key: 'vin', value: member.vin }]);
      const { page, graphqlRequests, streamRequests, sockets, console: messages } = await open(allowed.origin, `/rescue?transport=${transport}&session=${sessionId}`);
      await expect.poll(() => state(page), { timeout: 20_000 }).toBe('watching');
      const reqId = await page.locator('#req-id').innerText();
      expect(await shown(page)).toEqual(['BOOKED']);
      await untilHeld(t.url, 1);

      for (const [i, status] of STATUSES.entries()) {
        await moveRescue(reqId, status);
        await expect.poll(() => shown(page), { timeout: 15_000 }).toHaveLength(i + 2);
      }
      expect(await shown(page)).toEqual(['BOOKED', ...STATUSES]);
      expect(await state(page)).toBe('finished');
      expect(await page.locator('#error').innerText()).toBe('');
      expect(graphqlRequests).toEqual(transport === 'http' ? ['POST DispatchRescue', 'POST TrackRescue'] : ['POST DispatchRescue']);
      expect(sockets).toEqual(transport === 'ws' ? [`${t.url.replace(/^http/, 'ws')}/graphql`] : []);
      expect(streamRequests).toEqual(transport === 'sse' ? ['POST TrackRescue'] : []);
      expect(messages).toEqual([]);
      await page.close();
      await expect.poll(() => subscriptionsHeld(t.url)).toBe(0);
      // Its client awareness headers passed the CORS preflight and name it in the metrics.
      const metrics = await (await fetch(`${t.url}/metrics`)).text();
      expect(metrics).toMatch(/gateway_graphql_operations_total\{[^}]*operation_name="DispatchRescue"[^}]*client_name="rescue-tracker"\}/);
    }, 90_000);
  }
});

/** The rescue's event ids in the history (the webhooks area's), in commit order. */
async function recorded(reqId: string): Promise<string[]> {
  const history = runner(t.stack.subgraphs.find((s) => s.name === 'webhooks')!.db);
  const sql = 'select id from "webhooks"."events" where resource_key = ? order by seq';
  const rows = await history(sql, [`rescue:${reqId}`]);
  return rows.map((row) => String(row.id));
}
const eventIds = (page: Page) => page.locator('#statuses li[data-event-id]').evaluateAll(
  (items) => items.map((item) => (item as unknown as { dataset: { eventId: string } }).dataset.eventId),
);

/**
 * The event ids (SSE `id:` fields) of the first `count` results of a raw fetch, from the page, of rescue
 * `reqId`'s stream (graphql-sse's stream per subscription, a GET) with `Last-Event-ID`, as an EventSource
 * sends it when it reconnects (an EventSource itself cannot send the Authorization header).
 */
async function resumedOverSse(page: Page, reqId: string, lastEventId: string, count: number) {
  const query = 'subscription($id: ID!) { rescueUpdated(reqId: $id) { status } }';
  const params = new URLSearchParams({ query, variables: JSON.stringify({ id: reqId }) });
  const url = `${t.url}/graphql/stream?${params}`;
  return page.evaluate(async ({ url, token, last, count }) => {
    const headers = { accept: 'text/event-stream', authorization: `Bearer ${token}`, 'last-event-id': last };
    const reader = (await fetch(url, { headers })).body!.pipeThrough(new TextDecoderStream()).getReader();
    let ids: string[] = [];
    let text = '';
    while (ids.length < count) {
      const { value, done } = await reader.read();
      if (done) break;
      text += value;
      ids = [...text.matchAll(/^id: ?(.*)\n/gm)].map((match) => match[1]!);
    }
    await reader.cancel();
    return ids;
  }, { url, token: t.token, last: lastEventId, count });
}

describe('a rescue tracker that lost its connection (GraphQLWsLink)', () => {
  it('resumes after the last extensions.event.id: missed ones in order, none twice, then live', async () => {
    const member = await provision(t, t.token);
    const sessionId = await session(t, t.token, [{ key: 'vin', value: member.vin }]);
    const path = `/rescue?transport=ws&session=${sessionId}`;
    const { page, sockets, console: messages } = await open(allowed.origin, path);
    await expect.poll(() => state(page), { timeout: 20_000 }).toBe('watching');
    const reqId = await page.locator('#req-id').innerText();
    await untilHeld(t.url, 1);
    await moveRescue(reqId, 'EN_ROUTE');
    await expect.poll(() => shown(page), { timeout: 15_000 }).toEqual(['BOOKED', 'EN_ROUTE']);

    // Paused, its subscription ends and GraphQLWsLink's socket closes; two events commit meanwhile.
    await page.locator('#pause').click();
    await expect.poll(() => subscriptionsHeld(t.url)).toBe(0);
    await moveRescue(reqId, 'APPROACHING');
    await moveRescue(reqId, 'ARRIVED_ONSITE');
    await expect.poll(() => recorded(reqId)).toHaveLength(3);

    await page.locator('#resume').click();
    // Replayed results run the query as they are replayed: both show the rescue as it is now.
    const replayed = ['BOOKED', 'EN_ROUTE', 'ARRIVED_ONSITE', 'ARRIVED_ONSITE'];
    await expect.poll(() => shown(page), { timeout: 15_000 }).toEqual(replayed);
    await untilHeld(t.url, 1);
    await moveRescue(reqId, 'COMPLETED');
    await expect.poll(() => state(page), { timeout: 15_000 }).toBe('finished');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await shown(page)).toEqual([...replayed, 'COMPLETED']);
    const history = await recorded(reqId);
    expect(history).toHaveLength(4);
    expect(await eventIds(page)).toEqual(history);
    // The stream, fetched again from the page with the second event's id as Last-Event-ID: those after it.
    expect(await resumedOverSse(page, reqId, history[1]!, 2)).toEqual(history.slice(2));
    expect(sockets).toEqual(Array(2).fill(`${t.url.replace(/^http/, 'ws')}/graphql`));
    expect(await page.locator('#error').innerText()).toBe('');
    expect(messages).toEqual([]);
    await page.close();
    await expect.poll(() => subscriptionsHeld(t.url)).toBe(0);
  }, 90_000);
});

describe('a rescue tracked live from an origin not in CORS_ORIGINS', () => {
  it('cannot subscribe over either transport: the WebSocket is refused and the stream blocked by CORS', async () => {
    const member = await provision(t, t.token);
    const reqId = (await dispatch(t, t.token, await session(t, t.token, [{ key: 'vin', value: member.vin }]))).body.requestId as string;
    const ws = await open(refused.origin, `/rescue?transport=ws&reqId=${reqId}`);
    await expect.poll(() => state(ws.page), { timeout: 20_000 }).toBe('error');
    // The browser says no more than that the connection closed abnormally before it opened.
    expect(await ws.page.locator('#closed').innerText()).toBe('1006');
    expect(ws.sockets).toEqual([`${t.url.replace(/^http/, 'ws')}/graphql`]);
    await ws.page.close();

    const sse = await open(refused.origin, `/rescue?transport=sse&reqId=${reqId}`);
    await expect.poll(() => state(sse.page), { timeout: 20_000 }).toBe('error');
    expect(await sse.page.locator('#error').innerText()).toMatch(/Failed to fetch/);
    expect(sse.console.join('\n')).toMatch(new RegExp(`from origin '${refused.origin}' has been blocked by CORS policy`));
    await sse.page.close();
    expect(await subscriptionsHeld(t.url)).toBe(0);
  }, 60_000);
});
