import { expect, it } from 'vitest';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { subgraphUrlVariable } from '../../subgraphs/platform/config.ts';
import { startChildServer } from '../support/child-server.ts';
import { TEST_HOP_KEY } from '../support/stack.ts';

/**
 * SIGTERM while requests are in flight: the server stops accepting, finishes every request it had
 * taken (none fails), then exits 0. Token requests make good in-flight work: each spends tens of
 * milliseconds in scrypt, so a burst of them is still running when the signal lands.
 */
it('drains in-flight requests on SIGTERM before exiting', async () => {
  const client = { id: 'drain-client', secret: 'drain-secret-0123456789' };
  const server = await startChildServer({
    LOG_LEVEL: 'debug', BOOTSTRAP_CLIENT_ID: client.id, BOOTSTRAP_CLIENT_SECRET: client.secret, TOKEN_RATE_LIMIT_PER_MINUTE: '100000', INTERNAL_HOP_KEY: TEST_HOP_KEY,
    // only the gateway's own work is under test: the subgraphs are not started
    ...Object.fromEntries(Object.keys(subgraphDefinitions).map((name) => [subgraphUrlVariable(name), 'http://127.0.0.1:9/graphql'])),
  });
  try {
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret });
    const seen = () => server.stdout().split('\n').filter((l) => l.includes('"incoming request"') && l.includes('/platform/oauth')).length;
    const inFlight = Array.from({ length: 40 }, () => fetch(`${server.base}/platform/oauth/v1/token`, { method: 'POST', body: form })
      .then((r) => r.status, (e: Error) => `error: ${e.message}`));
    // Signal only once the server has taken every request (it logs each as it arrives).
    for (let i = 0; i < 500 && seen() < 40; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen()).toBe(40);
    server.child.kill('SIGTERM');
    const statuses = await Promise.all(inFlight);
    const failed = statuses.filter((s) => s !== 200);
    console.log(`drain: ${statuses.length} requests in flight at SIGTERM, ${failed.length} failed`);
    expect(failed).toEqual([]);
    expect(await server.exited).toBe(0);
    expect(await fetch(`${server.base}/healthz`).then(() => 'answered', () => 'refused')).toBe('refused');
  } finally {
    await server.stop();
  }
}, 300_000);
