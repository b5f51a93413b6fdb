/**
 * The REST docs page (the IDE's own: ide-browser.test.ts) in a real headless browser: the Chromium that `npm install`
 * brings (test/support/browser.ts), driven by playwright-core, under the pages' Content-Security-Policy
 * (gateway/http/security-headers.ts): every page records CSP violations and each test asserts there were none.
 * Screenshots go to artifacts/ (git-ignored).
 */
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, watchedPage } from '../support/browser.ts';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';
import { TOKEN_PATH } from '../../gateway/auth/token-route.ts';

const ARTIFACTS = new URL('../../artifacts/', import.meta.url).pathname;
const USERS_PATH = '/shared-mobility-insights/v2/users';

let t: TestStack;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  t = await startTestStack({ subgraphs: ['scoring', 'risk'] });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const openPage = () => watchedPage(browser);

/** Authorize's `oauth2` section (client credentials at the token endpoint): the default client's id and secret. */
async function authorizeWithClientCredentials(page: Page) {
  await page.locator('.swagger-ui .auth-wrapper .authorize').click();
  const dialog = page.locator('.swagger-ui .modal-ux');
  const oauth2 = dialog.locator('.auth-container')
    .filter({ has: page.locator('#client_id_clientCredentials') }).filter({ hasText: TOKEN_PATH });
  await oauth2.locator('#client_id_clientCredentials').fill(DEFAULT_CLIENT.id);
  await oauth2.locator('#client_secret_clientCredentials').fill(DEFAULT_CLIENT.secret);
  await oauth2.locator('button.authorize').click();
  // Authorized, the section shows the client id masked and offers Logout ("Remove authorization").
  const logout = dialog.getByRole('button', { name: 'Remove authorization' });
  await expect.poll(() => logout.count(), { timeout: 15_000 }).toBe(1);
  await dialog.locator('button.btn-done').first().click();
}

describe('the REST docs page in headless Chromium', () => {
  it('renders the REST docs page from /openapi.json, and Try it out calls the API', async () => {
    const { page, requested, violations } = await openPage();
    type Doc = { paths: Record<string, Record<string, unknown>>; webhooks: Record<string, Record<string, unknown>> };
    const openapi = (await t.request('GET', '/openapi.json')).body as Doc;
    // Every operation and every webhook payload is a block of its own.
    const operations = [...Object.values(openapi.paths), ...Object.values(openapi.webhooks)]
      .reduce((n, methods) => n + Object.keys(methods).length, 0);
    await page.goto(`${t.url}/docs`, { waitUntil: 'load' });
    const blocks = page.locator('.swagger-ui .opblock');
    // The whole document renders at once: on a busy machine this takes a while.
    await expect.poll(() => blocks.count(), { timeout: 60_000 }).toBe(operations);
    expect(await page.locator('.swagger-ui .info .title').innerText()).toContain('REST compatibility paths');
    await page.screenshot({ path: `${ARTIFACTS}rest-docs.png`, fullPage: false });

    // Try it out on a public path: Swagger UI sends the request from the page (connect-src) and shows the answer.
    const operation = page.locator('#operations-Risk_Index-riskInfo');
    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.locator('tr[data-param-name="geometry"] input').fill('POINT(-115.14 36.17)');
    await operation.getByRole('button', { name: 'Execute' }).click();
    const live = operation.locator('.live-responses-table');
    await expect.poll(() => live.locator('tbody .response-col_status').first().innerText().catch(() => ''), { timeout: 15_000 }).toBe('200');
    expect(await live.locator('tbody .response-col_description').first().innerText()).toContain('"outsideCoverage": true');
    expect(requested.filter((url) => url.startsWith(`${t.url}/riskIndex/v1/riskInfo?geometry=`))).toHaveLength(1);

    // Try it out twice on a POST: each execution is a new logical operation, so each gets its own fresh
    // Idempotency-Key (docs.js's request interceptor; the document has no example key to pre-fill), and
    // neither is a replay of the other nor refused as a key reused for another request (422).
    const sent: { key: string | undefined; status: number; replayed: string | undefined }[] = [];
    page.on('response', async (response) => {
      const request = response.request();
      if (request.method() !== 'POST' || new URL(request.url()).pathname !== USERS_PATH) return;
      sent.push({ key: (await request.allHeaders())['idempotency-key'], status: response.status(), replayed: response.headers()['idempotent-replayed'] });
    });
    await authorizeWithClientCredentials(page);
    const create = page.locator('#operations-Users-createUser');
    await create.locator('.opblock-summary').click();
    await create.getByRole('button', { name: 'Try it out' }).click();
    expect(await create.locator('tr[data-param-name="Idempotency-Key"] input').inputValue()).toBe('');
    // The same body twice (no id: the user's id is generated), as a user clicking Execute again would send.
    await create.locator('textarea.body-param__text').fill('{"homeZip": "60601"}');
    for (const n of [1, 2]) {
      await create.getByRole('button', { name: 'Execute' }).click();
      await expect.poll(() => sent.length, { timeout: 15_000 }).toBe(n);
    }
    expect(sent.map((s) => [s.status, s.replayed])).toEqual([[201, undefined], [201, undefined]]);
    const [first, second] = sent.map((s) => s.key);
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second).not.toBe(first);
    // A key the user types is sent as typed (to try a retry on purpose; Swagger UI checks it is a UUID, the schema's format).
    const typed = crypto.randomUUID();
    await create.locator('tr[data-param-name="Idempotency-Key"] input').fill(typed);
    await create.getByRole('button', { name: 'Execute' }).click();
    await expect.poll(() => sent.length, { timeout: 15_000 }).toBe(3);
    expect(sent[2]).toMatchObject({ key: typed, status: 201 });

    expect(requested.filter((url) => !url.startsWith(t.url) && !url.startsWith('data:'))).toEqual([]);
    expect(violations).toEqual([]);
    await page.close();
  }, 120_000);

  it('Authorize fetches a token with the client id and secret, and the page keeps neither', async () => {
    const { page, violations } = await openPage();
    await page.goto(`${t.url}/docs`, { waitUntil: 'load' });
    await page.locator('.swagger-ui .auth-wrapper .authorize').waitFor({ timeout: 60_000 });
    const tokenAnswers: number[] = [];
    page.on('response', (response) => {
      if (response.url() === `${t.url}${TOKEN_PATH}`) tokenAnswers.push(response.status());
    });
    await authorizeWithClientCredentials(page);
    expect(tokenAnswers).toEqual([200]);
    // Try it out on a write behind the b2b scope: the fetched token is sent.
    const create = page.locator('#operations-Users-createUser');
    await create.locator('.opblock-summary').click();
    await create.getByRole('button', { name: 'Try it out' }).click();
    await create.locator('textarea.body-param__text').fill('{"homeZip": "60601"}');
    await create.getByRole('button', { name: 'Execute' }).click();
    const live = create.locator('.live-responses-table tbody .response-col_status').first();
    await expect.poll(() => live.innerText().catch(() => ''), { timeout: 15_000 }).toBe('201');
    // Nothing of it is kept by the page: no storage, no cookie; a reload starts signed out.
    const kept = () => page.evaluate<unknown>('({ local: { ...localStorage }, session: { ...sessionStorage }, cookie: document.cookie })');
    expect(await kept()).toEqual({ local: {}, session: {}, cookie: '' });
    await page.reload({ waitUntil: 'load' });
    await expect.poll(() => page.locator('.swagger-ui .auth-wrapper .authorize').getAttribute('class'), { timeout: 60_000 })
      .toContain('unlocked');
    expect(await kept()).toEqual({ local: {}, session: {}, cookie: '' });
    expect(violations).toEqual([]);
    await page.close();
  }, 180_000);
});

describe('framing from another origin', () => {
  /** A page served from another origin (another loopback port, so that no private-network rule interferes). */
  async function otherOriginPage(html: string) {
    const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(html));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { page } = await openPage();
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { waitUntil: 'load' });
    return { page, async close() { await page.close(); server.close(); } };
  }

  it('blocks the IDE and the docs in a frame, and lets the Risk Index map be embedded', async () => {
    const map = `${t.url}/riskIndex/v1/map?${new URLSearchParams({ geometry: 'POINT(-115.14 36.17)', radius: '0.1' })}`;
    const { page, close } = await otherOriginPage(`<iframe name="ide" src="${t.url}/graphql"></iframe>`
      + `<iframe name="docs" src="${t.url}/docs"></iframe><iframe name="map" src="${map}"></iframe><img id="map" src="${map}">`);
    const frame = (name: string) => page.frames().find((f) => f.name() === name)!;
    // The map, from the same server, shows in a frame and as an image...
    await expect.poll(() => frame('map').locator('svg text').first().textContent()).toBeTruthy();
    expect(frame('map').url()).toBe(map);
    await expect.poll(() => page.evaluate<number>('document.getElementById("map").naturalWidth')).toBe(800);
    // ...while a frame refused by frame-ancestors shows Chromium's error page instead of the document.
    await expect.poll(() => frame('ide').url()).toMatch(/^chrome-error:/);
    await expect.poll(() => frame('docs').url()).toMatch(/^chrome-error:/);
    await close();
  }, 60_000);
});
