import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npmStart, ROOT } from './npm-script.ts';

export const freePort = () => new Promise<number>((resolve) => {
  const server = net.createServer().listen(0, '127.0.0.1', () => {
    const { port } = server.address() as net.AddressInfo;
    server.close(() => resolve(port));
  });
});

export interface ChildServer {
  base: string;
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

/**
 * Runs `npm start`'s command (its node flags, preloads and variables: npm-script.ts), on a free port
 * and a temporary DATA_DIR (removed by stop()); or on `options.dataDir`, which the caller owns and
 * removes. `options.cwd`: another checkout of the project to run (a benchmark's earlier revision).
 */
export async function startChildServer(env: Record<string, string>, options: { dataDir?: string; cwd?: string } = {}): Promise<ChildServer> {
  const dataDir = options.dataDir ?? await mkdtemp(join(tmpdir(), 'frg-child-'));
  const port = await freePort();
  const start = npmStart(options.cwd);
  const child = spawn(process.execPath, start.args, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...start.env, PORT: String(port), DATA_DIR: dataDir, PGLITE_IN_MEMORY: 'true', DATABASE_URL: '',
      // Load shedding off (test files share the machine's cores); a test that wants it passes OVERLOAD_*.
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => { out += chunk.toString(); });
  child.stderr?.on('data', (chunk: Buffer) => { err += chunk.toString(); });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  let started = false;
  for (let i = 0; i < 900 && !started && child.exitCode === null; i++) {
    started = await fetch(`${base}/healthz`).then((r) => r.ok, () => false);
    if (!started) await new Promise((r) => setTimeout(r, 200));
  }
  if (!started) {
    child.kill('SIGKILL');
    if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    throw new Error(`server did not start:\n${err.slice(-3000)}`);
  }
  return {
    base, child, exited, stdout: () => out, stderr: () => err,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      child.kill('SIGKILL');
      if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Until the server's /readyz answers 200 (its subgraphs' data in place: on a new PostgreSQL database a
 * first start loads the Risk Index data in the background); an error after `timeoutMs`.
 */
export async function untilReady(base: string, timeoutMs: number) {
  for (const until = Date.now() + timeoutMs; (await fetch(`${base}/readyz`)).status !== 200;) {
    if (Date.now() > until) throw new Error(`${base} was not ready within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface Finished { code: number | null; stdout: string; stderr: string; ms: number }

/** Runs a node script of the project to its end (bounded), with `env` over the test's environment. */
export function runNode(args: string[], env: Record<string, string>, timeoutMs = 120_000): Promise<Finished> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr, ms: performance.now() - started }); });
  });
}
