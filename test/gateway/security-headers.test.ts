/**
 * Security headers on every route family: JSON APIs get a strict policy, the IDE and the docs pages a
 * policy of their own, and the Risk Index SVG map stays embeddable without being able to run script.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';

const API_CSP = "default-src 'none';frame-ancestors 'none'";
const OUTSIDE_COVERAGE_MAP = `/riskIndex/v1/map?${new URLSearchParams({ geometry: 'POINT(-115.14 36.17)', radius: '0.1' })}`;

let t: TestStack;
beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring', 'risk'] }); }, 120_000);
afterAll(async () => { await t?.close(); });

const html = { accept: 'text/html' };

/** The headers every answer carries, whatever it is. */
function expectBaseline(headers: Headers) {
  expect(headers.get('x-content-type-options')).toBe('nosniff');
  expect(headers.get('referrer-policy')).toBe('no-referrer');
}

/** The headers of an answer that must not be framed. */
function expectUnframeable(headers: Headers) {
  expectBaseline(headers);
  expect(headers.get('x-frame-options')).toBe('DENY');
  expect(headers.get('content-security-policy')).toMatch(/(^|;)frame-ancestors 'none'(;|$)/);
}

/** A CSP header as a map of directive to its sources. */
const directives = (csp: string | null) => Object.fromEntries((csp ?? '').split(';').filter(Boolean).map((d) => {
  const [name, ...sources] = d.trim().split(/\s+/);
  return [name, sources];
}));

describe('security headers', () => {
  it('JSON APIs: POST /graphql, a REST path, /openapi.json, /healthz and a 404 get the strict API policy', async () => {
    const answers = await Promise.all([
      t.request('POST', '/graphql', { body: { query: '{ __typename }' }, token: t.token }),
      t.request('GET', '/shared-mobility-insights/v2/users/no-such-user', { token: t.token }),
      t.request('GET', '/openapi.json'),
      t.request('GET', '/healthz'),
      t.request('GET', '/no/such/route'),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 404, 200, 200, 404]);
    for (const { headers } of answers) {
      expectUnframeable(headers);
      expect(headers.get('content-security-policy')).toBe(API_CSP);
    }
  });

  it('answers written before routing (a URL Fastify cannot decode) carry the API policy too', async () => {
    const res = await fetch(`${t.url}/shared-mobility-insights/v2/users/%zz`);
    expect(res.status).toBe(400);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('content-security-policy')).toBe(API_CSP);
  });

  it('the GraphiQL page: its own files and workers, inline styles (Monaco) but no inline script, fetch and WebSocket to the same host, no framing', async () => {
    const res = await t.request('GET', '/graphql', { headers: html });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expectUnframeable(res.headers);
    const host = new URL(t.url).host;
    const csp = directives(res.headers.get('content-security-policy'));
    expect(csp['default-src']).toEqual(["'none'"]);
    expect(csp['script-src']).toEqual(["'self'"]);
    expect(csp['worker-src']).toEqual(["'self'"]);
    expect(csp['style-src']).toEqual(["'self'", "'unsafe-inline'"]);
    expect(csp['connect-src']).toEqual(["'self'", `ws://${host}`, `wss://${host}`]);
    expect(csp['font-src']).toEqual(["'self'", 'data:']);
    expect(csp['base-uri']).toEqual(["'none'"]);
    // Nothing inline may run: the page's own script is a served file.
    expect(res.body).not.toMatch(/<script>/);
    const asset = await t.request('GET', '/ide/ide.js');
    expect(asset.status).toBe(200);
    expectBaseline(asset.headers);
  });

  it('the GraphiQL page leaves a Host it cannot vouch for out of its policy', async () => {
    const { request } = await import('node:http');
    const { port } = new URL(t.url);
    const headers = await new Promise<Record<string, unknown>>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: '/graphql', headers: { accept: 'text/html', host: 'evil.example; script-src *' } }, (res) => {
        res.resume();
        resolve(res.headers);
      }).on('error', reject).end();
    });
    const csp = directives(String(headers['content-security-policy']));
    expect(csp['connect-src']).toEqual(["'self'"]);
    expect(csp['script-src']).toEqual(["'self'"]);
  });

  it('the REST docs page: its own files, Try it out against the same origin, no framing', async () => {
    const res = await t.request('GET', '/docs', { headers: html });
    expect(res.status).toBe(200);
    expectUnframeable(res.headers);
    const csp = directives(res.headers.get('content-security-policy'));
    expect(csp['default-src']).toEqual(["'none'"]);
    expect(csp['script-src']).toEqual(["'self'"]);
    expect(csp['connect-src']).toEqual(["'self'"]);
    expect(csp['img-src']).toEqual(["'self'", 'data:']);
    expect(res.body).not.toMatch(/<script>/);
    const asset = await t.request('GET', '/docs/assets/swagger-ui-bundle.js');
    expect(asset.status).toBe(200);
    expectBaseline(asset.headers);
  });

  it('the Risk Index SVG map: embeddable from any origin, and no script runs in it', async () => {
    const res = await t.request('GET', OUTSIDE_COVERAGE_MAP);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expectBaseline(res.headers);
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(res.headers.get('x-frame-options')).toBeNull();
    const csp = directives(res.headers.get('content-security-policy'));
    expect(csp['default-src']).toEqual(["'none'"]);
    expect(csp['frame-ancestors']).toBeUndefined();
    expect(csp['script-src']).toBeUndefined();
  });
});
