/**
 * The admin CLIs (`npm run clients`, `issuers`, `documents`) open the database themselves only when
 * nothing listens at --url: a gateway that listens but does not answer /healthz (busy, unwell, or not
 * a gateway) makes them stop with nothing changed, since it may serve another database than theirs.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runNode } from '../support/child-server.ts';

let dataDir: string;
let silent: Server;
let unwell: HttpServer;
const held: Socket[] = [];
const urlOf = (server: Server | HttpServer) => `http://127.0.0.1:${(server.address() as { port: number }).port}`;
const clients = (url: string) => runNode(['gateway/auth/clients-cli.ts', 'list', '--url', url], { DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'warn' });

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'frg-admin-cli-'));
  // Accepts connections and never answers, as a gateway stuck in a long pause would.
  silent = createServer((socket) => { held.push(socket); });
  unwell = createHttpServer((_req, res) => { res.statusCode = 503; res.end(); });
  await Promise.all([silent, unwell].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
});
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await Promise.all([silent, unwell].map((server) => new Promise((resolve) => server?.close(resolve))));
  await rm(dataDir, { recursive: true, force: true });
});

describe('the admin CLIs with something at --url', () => {
  it('stop with nothing changed when it listens but /healthz does not answer in time, and open no database', async () => {
    const url = urlOf(silent);
    const cli = await clients(url);
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`Something listens at ${url} but its /healthz did not answer within 5 s`);
    expect(cli.stderr).toContain('Nothing was changed');
    expect(cli.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
    expect(await readdir(dataDir)).toEqual([]);
  }, 60_000);

  it('stop the same when /healthz answers other than 200', async () => {
    const cli = await clients(urlOf(unwell));
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('/healthz answered 503');
    expect(await readdir(dataDir)).toEqual([]);
  }, 60_000);

  it('open the database directly when nothing listens (connection refused)', async () => {
    const cli = await clients(`http://127.0.0.1:${await freePort()}`);
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toEqual([]);
  }, 120_000);
});
