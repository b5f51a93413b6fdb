/**
 * CORS as a browser applies it: a page on an origin in CORS_ORIGINS, in the project's headless
 * Chromium, calls every method the routes take (PATCH, PUT and DELETE need a preflight that allows
 * them), graphql-sse's reservation (PUT /graphql/stream) included, with the headers the API reads,
 * and reads the headers it exposes.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { parseList, type Item } from 'structured-headers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const SMI = '/shared-mobility-insights/v2';

let t: TestStack;
let browser: Browser;
let app: { origin: string; server: Server };

/** An empty page on an ephemeral loopback port, named `localhost` (the API is at 127.0.0.1: another origin). */
async function serveEmptyPage() {
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>app</title>'));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { origin: `http://localhost:${(server.address() as AddressInfo).port}`, server };
}

beforeAll(async () => {
  app = await serveEmptyPage();
  t = await startTestStack({ subgraphs: ['scoring', 'webhooks'], env: { CORS_ORIGINS: app.origin, WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
  app?.server.close();
});

interface Call { method: string; path: string; body?: unknown; headers?: Record<string, string>; read?: string[] }
interface Answer { status?: number; headers?: Record<string, string | null>; failed?: string }

/** The page's fetch of each call, in turn: its status and the named headers as the script can read them, or why it failed. */
async function fromPage(page: Page, calls: Call[]): Promise<Answer[]> {
  return page.evaluate(async ({ api, token, calls }) => {
    const answers: Answer[] = [];
    for (const { method, path, body, headers, read = [] } of calls) {
      try {
        const res = await fetch(`${api}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        await res.text();
        answers.push({ status: res.status, headers: Object.fromEntries(read.map((name) => [name, res.headers.get(name)])) });
      } catch (error) {
        answers.push({ failed: String(error) });
      }
    }
    return answers;
  }, { api: t.url, token: t.token, calls });
}

describe('a browser app on an origin in CORS_ORIGINS', () => {
  it('PATCHes, PUTs and DELETEs REST resources and reserves a graphql-sse stream, reading the exposed headers', async () => {
    const userId = 'cors-browser-1';
    expect((await t.request('POST', `${SMI}/users`, { token: t.token, body: { userId, homeZip: '60601' } })).status).toBe(201);
    const subscription = await t.request('POST', '/platform/webhooks/v1/subscriptions', { token: t.token, body: { url: 'http://127.0.0.1:9/hook', eventTypes: ['mvr.created'] } });
    expect(subscription.status).toBe(201);
    const page = await browser.newPage();
    await page.goto(`${app.origin}/`, { waitUntil: 'load' });

    const created = { method: 'POST', path: `${SMI}/users`, body: { userId: 'cors-browser-2' }, headers: { 'idempotency-key': 'cors-browser-key' } };
    const answers = await fromPage(page, [
      { method: 'PATCH', path: `${SMI}/users/${userId}`, body: { homeZip: '94105' }, read: ['x-request-id', 'ratelimit-policy', 'ratelimit', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'] },
      { method: 'PUT', path: `${SMI}/users/${userId}/enrollment`, body: { enrollmentStatus: 'accepted' } },
      { method: 'DELETE', path: `/platform/webhooks/v1/subscriptions/${subscription.body.id}` },
      { method: 'PUT', path: '/graphql/stream', headers: { 'if-none-match': '"x"', 'last-event-id': '0', 'apollographql-client-name': 'cors-test', 'apollographql-client-version': '1' } },
      { ...created, read: ['idempotent-replayed'] },
      { ...created, read: ['idempotent-replayed'] },
      { method: 'HEAD', path: `${SMI}/users/${userId}` },
      { method: 'GET', path: `${SMI}/users/${userId}`, headers: { 'if-none-match': '"an-old-tag"' } },
    ]);
    expect(answers.map((a) => a.failed ?? a.status)).toEqual([200, 200, 204, 201, 201, 201, 200, 200]);
    const [patched, , , , first, replayed] = answers;
    expect(patched!.headers!['x-request-id']).toMatch(/^[\w-]{8,}$/);
    expect(Number(patched!.headers!['x-ratelimit-limit'])).toBe(t.config.RATE_LIMIT_PER_MINUTE);
    expect(Number(patched!.headers!['x-ratelimit-remaining'])).toBeGreaterThan(0);
    expect(Number(patched!.headers!['x-ratelimit-reset'])).toBeGreaterThan(0);
    // The IETF fields, parsed as RFC 8941 lists, say the same.
    const [[policy, quota]] = parseList(patched!.headers!['ratelimit-policy']!) as Item[];
    expect([policy, Object.fromEntries(quota!)]).toEqual(['client', { q: t.config.RATE_LIMIT_PER_MINUTE, w: 60 }]);
    const [[name, state]] = parseList(patched!.headers!.ratelimit!) as Item[];
    expect([name, state!.get('r')]).toEqual(['client', Number(patched!.headers!['x-ratelimit-remaining'])]);
    expect(first!.headers).toEqual({ 'idempotent-replayed': null });
    expect(replayed!.headers).toEqual({ 'idempotent-replayed': 'true' });

    // What the browser did is what the server holds.
    const user = await t.request('GET', `${SMI}/users/${userId}`, { token: t.token });
    expect(user.body).toMatchObject({ homeZip: '94105' });
    expect((await t.request('GET', `/platform/webhooks/v1/subscriptions/${subscription.body.id}`, { token: t.token })).status).toBe(404);
    await page.close();
  }, 60_000);
});
