import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { subgraphUrlVariable } from '../../subgraphs/platform/config.ts';

const freePort = () => new Promise<number>((resolve) => {
  const server = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address() as net.AddressInfo;
    server.close(() => resolve(port));
  });
});

/**
 * SIGTERM while requests are in flight: the server stops accepting, finishes every request it had
 * taken (none fails), then exits 0. Token requests make good in-flight work: each spends tens of
 * milliseconds in scrypt, so a burst of them is still running when the signal lands.
 */
it('drains in-flight requests on SIGTERM before exiting', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'frg-drain-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['gateway/server.ts'], {
    env: {
      ...process.env, PORT: String(port), DATA_DIR: dataDir, PGLITE_IN_MEMORY: 'true', DATABASE_URL: '', LOG_LEVEL: 'warn',
      // only the gateway's own work is under test: other subgraphs are not started
      ...Object.fromEntries(Object.keys(subgraphDefinitions).map((name) => [subgraphUrlVariable(name), 'http://127.0.0.1:9/graphql'])),
      BOOTSTRAP_CLIENT_ID: 'drain-client', BOOTSTRAP_CLIENT_SECRET: 'drain-secret-0123456789', TOKEN_RATE_LIMIT_PER_MINUTE: '100000',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const base = `http://127.0.0.1:${port}`;
    let started = false;
    for (let i = 0; i < 600 && !started && child.exitCode === null; i++) {
      started = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
      if (!started) await new Promise((r) => setTimeout(r, 200));
    }
    expect(started, `server did not start:\n${stderr.slice(-2000)}`).toBe(true);
    const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'drain-client', client_secret: 'drain-secret-0123456789' });
    const inFlight = Array.from({ length: 40 }, () => fetch(`${base}/platform/oauth/v1/token`, { method: 'POST', body: form })
      .then((r) => r.status, (e: Error) => `error: ${e.message}`));
    await new Promise((r) => setTimeout(r, 60));
    child.kill('SIGTERM');
    const statuses = await Promise.all(inFlight);
    const failed = statuses.filter((s) => s !== 200);
    console.log(`drain: ${statuses.length} requests in flight at SIGTERM, ${failed.length} failed`);
    expect(failed).toEqual([]);
    expect(await exited).toBe(0);
    const after = await fetch(`${base}/healthz`).then(() => 'answered', () => 'refused');
    expect(after).toBe('refused');
  } finally {
    child.kill('SIGKILL');
    await rm(dataDir, { recursive: true, force: true });
  }
}, 180_000);
