/**
 * The image holds only what .dockerignore lets through: the closest run to the image's without
 * Docker is its command, environment and user-writable DATA_DIR on a copy of the build context alone
 * (node_modules linked in place of `npm ci`; commands.test.ts checks that only dependencies are imported).
 * A file the services need outside that context fails here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/child-server.ts';
import { gatewayClient } from '../support/http.ts';
import { DEFAULT_CLIENT } from '../support/stack.ts';
import { buildContext } from './build-context.ts';
import { dockerfile, dockerfileEnv, ROOT } from './files.ts';

let folder: string;
let child: ChildProcess;
let output = '';
let base: string;
const client = gatewayClient(() => base);

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'frg-image-'));
  for (const file of await buildContext(ROOT)) {
    await mkdir(dirname(join(folder, file)), { recursive: true });
    await copyFile(join(ROOT, file), join(folder, file));
  }
  await symlink(join(ROOT, 'node_modules'), join(folder, 'node_modules'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const [node, ...args] = JSON.parse(dockerfile().find(([i]) => i === 'CMD')![1]) as string[];
  expect(node).toBe('node');
  const image = dockerfileEnv();
  child = spawn(process.execPath, args, {
    cwd: folder,
    env: {
      PATH: process.env.PATH, ...image, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: join(folder, image.DATA_DIR.replace(/^\/app\//, '')),
      BOOTSTRAP_CLIENT_ID: DEFAULT_CLIENT.id, BOOTSTRAP_CLIENT_SECRET: DEFAULT_CLIENT.secret, OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  for (let i = 0; i < 900 && child.exitCode === null; i++) {
    if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the image's command did not get ready on the build context alone:\n${output.slice(-3000)}`);
}, 240_000);
afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('the image\'s files', () => {
  it('run the whole graph: a token, REST and GraphQL over every subgraph, then a clean stop', async () => {
    const token = await client.tokenFor(DEFAULT_CLIENT.id, DEFAULT_CLIENT.secret);
    const rest = await client.request('GET', '/riskIndex/v1/riskInfo?geometry=POINT(-87.6298%2041.8781)&radius=0.02', { token });
    expect(rest.status, JSON.stringify(rest.body)).toBe(200);
    const gql = await client.request('POST', '/graphql', {
      token, body: { query: '{ bookings(first: 1) { nodes { id } } webhookSubscriptions { id } riskIndex(wkt: "POINT(-87.6298 41.8781)", radius: 0.02) { __typename } }' },
    });
    expect(gql.status, JSON.stringify(gql.body)).toBe(200);
    expect(gql.body.errors).toBeUndefined();
    expect((await fetch(`${base}/openapi.json`)).status).toBe(200);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
