/**
 * Issue 44: the image's default command, compose's commands and `npm start` run node alike (flags,
 * preloads, glibc settings), the image answers from outside its container (HOST) as a user other
 * than root, and its health checks work: each check's `node -e` run against a server answering 200,
 * one answering 503 and a closed port.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { buildContext } from './build-context.ts';
import { composeFile, dockerfile, dockerfileEnv, npmScript, ownServices, ROOT } from './files.ts';

const start = npmScript('start');
const imageCommand = () => JSON.parse(dockerfile().find(([i]) => i === 'CMD')![1]) as string[];
/** npm start's node flags and preloads: everything between `node` and the script. */
const nodeFlags = (argv: string[]) => argv.slice(1, -1);

describe('the image and npm start', () => {
  it('run the same command: node, the same flags and preloads, gateway/server.ts', () => {
    expect(start.argv[0]).toBe('node');
    expect(imageCommand()).toEqual(start.argv);
  });

  it('set the same glibc malloc settings', () => {
    expect(Object.keys(start.env).length).toBeGreaterThan(0);
    for (const [key, value] of Object.entries(start.env)) expect(dockerfileEnv()[key], key).toBe(value);
  });

  it('listens on every interface of its container, as a user other than root, with DATA_DIR its own', () => {
    const env = dockerfileEnv();
    expect(env.HOST).toBe('0.0.0.0');
    const users = dockerfile().filter(([i]) => i === 'USER').map(([, user]) => user);
    expect(users.at(-1)).toBe('node');
    expect(dockerfile().find(([i, args]) => i === 'RUN' && args.includes(env.DATA_DIR) && args.includes('chown node'))).toBeDefined();
    expect(dockerfile().find(([i]) => i === 'EXPOSE')![1]).toBe(env.PORT);
  });

  it('prepares the first start\'s data at build, readable by that user (the cache folder is made private)', () => {
    const steps = dockerfile().map(([i, args]) => `${i} ${args}`);
    const prepare = steps.findIndex((step) => step.startsWith('RUN node subgraphs/prepare-cli.ts'));
    expect(prepare).toBeGreaterThan(steps.indexOf('COPY . .'));
    expect(steps[prepare]).toContain('chmod -R a+rX node_modules/.cache');
    expect(prepare).toBeLessThan(steps.findIndex((step) => step.startsWith('USER')));
  });

  it('copies every file its commands load into the image', async () => {
    const context = new Set(await buildContext(ROOT));
    const files = [...start.argv.filter((a) => a.endsWith('.ts')), 'subgraphs/serve.ts'].map((f) => f.replace(/^\.\//, ''));
    expect(files.filter((file) => !context.has(file))).toEqual([]);
  });

  it('imports only packages that `npm ci --omit=dev` installs', async () => {
    // What runs in a container: the commands and their preloads, the build step, the Risk Index
    // worker threads' module, and the operator CLIs the README has run there.
    const entryPoints = [...start.argv.filter((a) => a.endsWith('.ts')), 'subgraphs/serve.ts', 'subgraphs/prepare-cli.ts',
      'subgraphs/risk/geometry/area-task.ts', 'gateway/auth/clients-cli.ts', 'subgraphs/platform/auth/keys-cli.ts',
      'subgraphs/scoring/mvr/mvr-cli.ts', 'subgraphs/risk/ingest-cli.ts', 'subgraphs/platform/tracing/sdk.ts'];
    const { metafile } = await build({
      absWorkingDir: ROOT, entryPoints, bundle: true, packages: 'external', platform: 'node', format: 'esm', write: false, metafile: true, outdir: 'out', logLevel: 'error',
    });
    const imported = new Set(Object.values(metafile.inputs).flatMap((input) => input.imports).filter((i) => i.external && !i.path.startsWith('node:'))
      .map((i) => i.path.split('/').slice(0, i.path.startsWith('@') ? 2 : 1).join('/')));
    const { dependencies } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(imported.size).toBeGreaterThan(20);
    expect([...imported].filter((name) => !(name in dependencies))).toEqual([]);
  });
});

describe('docker-compose.yml', () => {
  it('runs the gateway with the image\'s command, and each subgraph with npm start\'s node flags', () => {
    const services = Object.fromEntries(ownServices());
    expect(services.gateway.command ?? imageCommand()).toEqual(start.argv);
    for (const name of Object.keys(subgraphDefinitions)) {
      expect(services[name].command, name).toEqual(['node', ...nodeFlags(start.argv), 'subgraphs/serve.ts', name]);
    }
  });
});

describe('health checks', () => {
  let ok: Server;
  let failing: Server;
  let closedPort: number;
  const listen = (status: number) => new Promise<Server>((resolve) => {
    const server = createServer((req, res) => res.writeHead(req.url === '/healthz' || req.url === '/readyz' ? status : 404).end())
      .listen(0, '127.0.0.1', () => resolve(server));
  });
  const portOf = (server: Server) => (server.address() as AddressInfo).port;
  beforeAll(async () => {
    [ok, failing] = await Promise.all([listen(200), listen(503)]);
    const closed = await listen(200);
    closedPort = portOf(closed);
    closed.close();
  });
  afterAll(() => { ok?.close(); failing?.close(); });

  /** Runs a check's `node -e <script>` (exec form) with PORT set, as the container would; its exit code. */
  const run = (test: string[], port: number, rewrite = (s: string) => s) => {
    const [node, flag, script] = test.filter((word) => word !== 'CMD');
    expect([node, flag]).toEqual(['node', '-e']);
    const child = spawn(process.execPath, ['-e', rewrite(script)], { env: { ...process.env, PORT: String(port) }, timeout: 10_000 });
    return new Promise<number | null>((resolve) => child.on('exit', resolve));
  };

  it('the image\'s: GET /healthz on PORT with node\'s fetch, no curl needed', async () => {
    const [, args] = dockerfile().find(([i]) => i === 'HEALTHCHECK')!;
    const test = JSON.parse(args.slice(args.indexOf('CMD') + 3).trim()) as string[];
    expect(test.at(-1)).toContain('/healthz');
    expect(await run(test, portOf(ok))).toBe(0);
    expect(await run(test, portOf(failing))).toBe(1);
    expect(await run(test, closedPort)).toBe(1);
  });

  it('compose\'s: GET /readyz on the container port, so that the gateway starts after ready subgraphs', async () => {
    const test = composeFile().services.gateway.healthcheck!.test;
    expect(test.at(-1)).toContain('http://127.0.0.1:4000/readyz');
    const on = (port: number) => (script: string) => script.replace('127.0.0.1:4000', `127.0.0.1:${port}`);
    expect(await run(test, 0, on(portOf(ok)))).toBe(0);
    expect(await run(test, 0, on(portOf(failing)))).toBe(1);
    expect(await run(test, 0, on(closedPort))).toBe(1);
  });
});
