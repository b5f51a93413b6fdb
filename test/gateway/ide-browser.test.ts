/**
 * The IDE (GraphiQL 5 at GET /graphql) as an analyst uses it, in the project's Chromium under the
 * page's Content-Security-Policy (every page records violations; each test asserts there were none):
 * sign in with an API client's id and secret and run a field that needs a token, the token renewed
 * before it expires, a shared link opened unrun and copied back, a deferred fragment's part, the
 * explorer's query, and the example subscription over a WebSocket.
 */
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiSchema, servedExamples } from '../../gateway/ide/index.ts';
import { launchBrowser } from '../support/browser.ts';
import {
  clipboardContext, editorText, fillVariables, installClock, openIde, queryText, responseText, runOperation, showSignIn,
} from '../support/ide-page.ts';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';
import { subscriptionsHeld, untilHeld } from '../support/subscriptions-held.ts';
import { dispatch, provision, session } from '../roadside/helpers.ts';

const ARTIFACTS = new URL('../../artifacts/', import.meta.url).pathname;
const USER_ID = 'ide-browser-1';
const TOKEN_PATH = '/platform/oauth/v1/token';

let t: TestStack;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  t = await startTestStack({ subgraphs: ['scoring', 'risk', 'roadside'] });
  const created = await t.graphql(`mutation { createUser(input: { userId: "${USER_ID}", homeZip: "60601" }) { userId } }`);
  expect(created.data).toEqual({ createUser: { userId: USER_ID } });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

const newContext = () => clipboardContext(browser);
const open = (context: BrowserContext, path = '/graphql') => openIde(context, `${t.url}${path}`);

async function signIn(page: Page, clientId: string, secret: string) {
  await showSignIn(page);
  await page.getByLabel('Client id').fill(clientId);
  await page.getByLabel('Client secret').fill(secret);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

describe('the IDE in headless Chromium', () => {
  it('loads from the gateway alone with the examples as tabs, the first with its variables, and runs nothing injected', async () => {
    const context = await newContext();
    const { page, requested, violations } = await open(context);
    const examples = servedExamples(apiSchema());
    await expect.poll(() => page.locator('.graphiql-tab').count(), { timeout: 10_000 }).toBe(examples.length);
    await expect.poll(async () => JSON.parse(await editorText(page, '.graphiql-editor-tool')) as unknown, { timeout: 10_000 }).toEqual(examples[0]!.variables);
    // The schema (introspection) loaded: the documentation explorer lists the root types.
    await page.getByRole('button', { name: 'Show Documentation Explorer' }).click();
    await expect.poll(() => page.locator('.graphiql-doc-explorer').innerText(), { timeout: 10_000 }).toMatch(/query:\s*Query/);
    await page.screenshot({ path: `${ARTIFACTS}graphiql.png` });
    expect(requested.filter((url) => !url.startsWith(t.url) && !url.startsWith('data:'))).toEqual([]);
    // The editors' language worker is loaded asynchronously: it may be asked for a moment after the rest.
    await expect.poll(() => requested.some((url) => url.endsWith('/ide/graphql.worker.js')), { timeout: 10_000 }).toBe(true);
    expect(violations).toEqual([]);
    // The policy is live: a script injected into the page is refused.
    await page.evaluate(`document.body.appendChild(Object.assign(document.createElement('script'), { textContent: 'window.injected = true' }))`);
    await expect.poll(() => violations.filter((v) => /^script-src-elem blocked inline|Executing inline script violates/.test(v)).length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await page.evaluate('window.injected')).toBeUndefined();
    await context.close();
  }, 90_000);

  it('signs in with a client id and secret, keeps the secret out of storage and the page, and renews the token', async () => {
    const context = await newContext();
    const { page, violations } = await open(context);
    // Time is the page's to move: the renewal a minute before the hour comes at once.
    await installClock(page);
    const tokenRequests: string[] = [];
    page.on('response', (response) => { if (response.url().endsWith(TOKEN_PATH)) tokenRequests.push(`${response.status()}`); });
    await page.getByRole('tab', { name: 'ScoringUser' }).click();
    await fillVariables(page, `{ "userId": "${USER_ID}" }`);
    await runOperation(page);
    await expect.poll(() => responseText(page), { timeout: 10_000 }).toContain('UNAUTHENTICATED');

    await signIn(page, DEFAULT_CLIENT.id, 'not-the-secret');
    await expect.poll(() => page.locator('.ide-error').innerText(), { timeout: 15_000 }).toMatch(/^Sign-in failed: /);
    await signIn(page, DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret);
    await expect.poll(() => page.getByRole('status').innerText(), { timeout: 10_000 }).toContain(`Signed in as ${DEFAULT_CLIENT.id}`);
    expect(await page.getByLabel('Client secret').count()).toBe(0);
    await runOperation(page);
    await expect.poll(() => responseText(page), { timeout: 10_000 }).toContain(`"userId": "${USER_ID}"`);

    // The secret is nowhere but the session's memory: not in storage, the URL, the headers editor or the DOM.
    const kept = await page.evaluate('JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + location.href + document.body.innerHTML') as string;
    expect(kept).not.toContain(DEFAULT_CLIENT.secret);
    await page.locator('.graphiql-editor-tools').getByRole('button', { name: 'Headers', exact: true }).click();
    expect(await editorText(page, '.graphiql-editor-tool')).not.toMatch(/Bearer|secret/i);

    await page.clock.fastForward('59:30');
    await expect.poll(() => tokenRequests, { timeout: 10_000 }).toEqual(['401', '200', '200']);
    await runOperation(page);
    await expect.poll(() => responseText(page), { timeout: 10_000 }).toContain(`"userId": "${USER_ID}"`);
    expect(violations).toEqual([]);
    await context.close();
  }, 90_000);

  it('opens a shared link in a new tab, unrun, and copies the active operation back into a link', async () => {
    const context = await newContext();
    const query = 'query Shared($userId: ID!) { user(userId: $userId) { userId homeZip } }';
    const variables = `{"userId":"${USER_ID}"}`;
    const link = `/graphql#query=${encodeURIComponent(query)}&variables=${encodeURIComponent(variables)}&operationName=Shared`;
    const executed: string[] = [];
    context.on('request', (request) => {
      if (request.method() === 'POST' && request.url().endsWith('/graphql') && !/IntrospectionQuery/.test(request.postData() ?? '')) executed.push(request.postData() ?? '');
    });
    const { page, violations } = await open(context, link);
    const examples = servedExamples(apiSchema());
    await expect.poll(() => page.locator('.graphiql-tab').count(), { timeout: 10_000 }).toBe(examples.length + 1);
    await expect.poll(() => queryText(page), { timeout: 15_000 }).toContain('query Shared($userId: ID!)');
    expect(await page.locator('.graphiql-tab[aria-selected="true"], .graphiql-tab-active').innerText()).toContain('Shared');
    expect(executed).toEqual([]);
    // The fragment never reached the server; the page dropped it once read.
    expect(await page.evaluate('location.hash')).toBe('');

    await page.getByRole('button', { name: 'Copy link to this operation' }).click();
    const copied = await page.evaluate('navigator.clipboard.readText()') as string;
    const fragment = new URLSearchParams(new URL(copied).hash.slice(1));
    expect(new URL(copied).pathname).toBe('/graphql');
    expect(fragment.get('query')).toBe(query);
    expect(JSON.parse(fragment.get('variables')!)).toEqual(JSON.parse(variables));
    expect(violations).toEqual([]);
    await context.close();
  }, 90_000);

  it('asks for deferred fragments as multipart parts and shows the map part merged into the answer', async () => {
    const context = await newContext();
    const { page, violations } = await open(context);
    const answers: string[] = [];
    page.on('response', (response) => {
      if (response.url().endsWith('/graphql') && /RiskIndexMapDeferred/.test(response.request().postData() ?? '')) answers.push(String(response.headers()['content-type']));
    });
    await page.getByRole('tab', { name: 'RiskIndexMapDeferred' }).click();
    // GraphiQL takes the operation name from the tab's editor a moment after the switch, as a user sees it.
    await expect.poll(() => queryText(page), { timeout: 15_000 }).toMatch(/query RiskIndexMapDeferred/);
    await runOperation(page);
    // The map is a Risk Index evaluation of its own: slow on a busy machine.
    await expect.poll(() => responseText(page), { timeout: 90_000 }).toContain('"riskMap"');
    const shown = await responseText(page);
    expect(shown).toContain('"riskInfo"');
    expect(shown).toContain('<svg');
    expect(answers).toEqual([expect.stringMatching(/^multipart\/mixed;.*deferSpec=20220824/)]);
    expect(violations).toEqual([]);
    await context.close();
  }, 150_000);

  it("runs the query the explorer built", async () => {
    const context = await newContext();
    const { page, violations } = await open(context);
    await page.getByRole('tab', { name: /^RiskIndex(?![A-Za-z])/ }).click();
    await page.getByRole('button', { name: 'Show GraphiQL Explorer' }).click();
    const explorer = page.locator('.graphiql-plugin');
    await explorer.getByText('farsInfo', { exact: true }).first().click();
    await expect.poll(() => queryText(page), { timeout: 15_000 }).toMatch(/farsInfo/);
    await runOperation(page);
    await expect.poll(() => responseText(page), { timeout: 20_000 }).toContain('"farsInfo"');
    expect(await responseText(page)).not.toContain('"errors"');
    expect(violations).toEqual([]);
    await context.close();
  }, 90_000);

  it('runs the example subscription over a WebSocket to its own host and shows each pushed result', async () => {
    const member = await provision(t, t.token);
    const reqId = (await dispatch(t, t.token, await session(t, t.token, [{ key: 'vin', value: member.vin }]))).body.requestId as string;
    const context = await newContext();
    const { page, violations } = await open(context);
    const sockets: string[] = [];
    page.on('websocket', (socket) => { sockets.push(socket.url()); });
    await signIn(page, DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret);
    await expect.poll(() => page.getByRole('status').innerText(), { timeout: 10_000 }).toContain('Signed in');
    await page.getByRole('tab', { name: 'RescueTrack' }).click();
    await expect.poll(() => queryText(page), { timeout: 15_000 }).toContain('rescueUpdated(reqId: $reqId)');
    await fillVariables(page, JSON.stringify({ reqId }));
    await runOperation(page);
    await untilHeld(t.url, 1);
    expect(sockets).toEqual([`${t.url.replace(/^http/, 'ws')}/graphql`]);
    for (const status of ['EN_ROUTE', 'APPROACHING']) {
      const moved = await t.graphql('mutation($id: ID!, $st: RescueStatus!) { updateRescueStatus(input: { reqId: $id, status: $st }) { status } }', { id: reqId, st: status });
      expect(moved.data).toEqual({ updateRescueStatus: { status: 'OK' } });
      await expect.poll(() => responseText(page), { timeout: 15_000 }).toContain(`"status": "${status}"`);
    }
    await page.screenshot({ path: `${ARTIFACTS}graphiql-subscription.png` });
    // The execute button stops it: the gateway lets the subscription go.
    await runOperation(page);
    await expect.poll(() => subscriptionsHeld(t.url), { timeout: 10_000 }).toBe(0);
    expect(violations).toEqual([]);
    await context.close();
  }, 90_000);
});
