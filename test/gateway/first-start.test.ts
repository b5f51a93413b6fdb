/**
 * The first five minutes: `npm start` prints where everything is and the development client as a
 * ready-to-paste export line; that line gets a token and makes another client with
 * `npm run clients -- create`; `GET /` links the same, as a page or as JSON.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { baseUrl, ENTRY_POINTS } from '../../gateway/home.ts';
import { runNode, startChildServer, type ChildServer } from '../support/child-server.ts';

let server: ChildServer;
let exported: { CLIENT_ID: string; CLIENT_SECRET: string };

beforeAll(async () => {
  server = await startChildServer({ BOOTSTRAP_CLIENT_ID: '', BOOTSTRAP_CLIENT_SECRET: '', BOOTSTRAP_ORG: 'default' });
  // The banner is written right after listening, which /healthz answering does not wait for.
  for (let i = 0; i < 100 && !server.stdout().includes('Readiness'); i++) await new Promise((r) => setTimeout(r, 100));
}, 180_000);
afterAll(async () => { await server?.stop(); });

const token = (id: string, secret: string, scope?: string) => fetch(`${server.base}/platform/oauth/v1/token`, {
  method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: secret, ...(scope ? { scope } : {}) }),
});

describe('start output', () => {
  it('prints every entry point at the address it listens on, plainly', () => {
    const out = server.stdout();
    expect(out).toContain(`listening on ${server.base}/`);
    for (const { label, path } of Object.values(ENTRY_POINTS)) expect(out).toMatch(new RegExp(`^ +${label.replace(/[()]/g, '\\$&')} +${server.base}${path}$`, 'm'));
  });

  it('prints the development client as an export line a shell takes as is, and its credentials get an admin token', async () => {
    const line = /^ +(export CLIENT_ID=\S+ CLIENT_SECRET=\S+)$/m.exec(server.stdout())?.[1];
    expect(line).toBeDefined();
    const shell = spawnSync('sh', ['-c', `${line} && printf '{"CLIENT_ID":"%s","CLIENT_SECRET":"%s"}' "$CLIENT_ID" "$CLIENT_SECRET"`], { encoding: 'utf8' });
    exported = JSON.parse(shell.stdout) as typeof exported;
    expect(exported.CLIENT_ID).toMatch(/^client_/);
    const res = await token(exported.CLIENT_ID, exported.CLIENT_SECRET, 'admin');
    expect(res.status).toBe(200);
  });

  it('`npm run clients -- create` with that line pasted makes another development client', async () => {
    const port = new URL(server.base).port;
    const cli = await runNode(['gateway/auth/clients-cli.ts', 'create', '--scopes', 'b2b,roadside,admin'],
      { ...exported, PORT: port, ADMIN_CLIENT_ID: '', ADMIN_CLIENT_SECRET: '', BOOTSTRAP_CLIENT_ID: '', BOOTSTRAP_CLIENT_SECRET: '', BOOTSTRAP_ORG: '' });
    expect(cli.code, cli.stderr).toBe(0);
    const created = JSON.parse(cli.stdout) as { clientId: string; clientSecret: string; organisation: string; scopes: string[] };
    expect(created).toMatchObject({ organisation: 'default', scopes: ['b2b', 'roadside', 'admin'] });
    expect((await token(created.clientId, created.clientSecret, 'admin')).status).toBe(200);
  });

  it('prints a wildcard address as localhost', () => {
    expect(baseUrl({ address: '0.0.0.0', family: 'IPv4', port: 4000 })).toBe('http://localhost:4000');
    expect(baseUrl({ address: '::', family: 'IPv6', port: 4000 })).toBe('http://localhost:4000');
    expect(baseUrl({ address: '::1', family: 'IPv6', port: 80 })).toBe('http://[::1]:80');
  });
});

describe('GET /', () => {
  it('is a small page linking every entry point, under the page policy (no inline script or style)', async () => {
    const res = await fetch(`${server.base}/`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('vary')).toMatch(/accept/i);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    const page = await res.text();
    expect(page).not.toMatch(/<script|<style|\sstyle=/i);
    for (const { path, post } of Object.values(ENTRY_POINTS)) expect(page).toContain(post ? `<code>POST ${path}</code>` : `href="${path}"`);
    expect(page).toContain('npm run clients -- create');
  });

  it('answers JSON to a client that asks for it, with the same links, each of which answers', async () => {
    const res = await fetch(`${server.base}/`, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = await res.json() as { links: Record<string, string> };
    expect(body.links).toEqual(Object.fromEntries(Object.entries(ENTRY_POINTS).map(([key, { path }]) => [key, path])));
    for (const [key, path] of Object.entries(body.links)) {
      if (ENTRY_POINTS[key].post) continue;
      expect((await fetch(`${server.base}${path}`, { headers: { accept: 'text/html' } })).status, path).toBe(200);
    }
  });
});
