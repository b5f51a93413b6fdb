import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from './child-server.ts';

/** NATS_SERVER_BIN, else `nats-server` on PATH, else /usr/sbin/nats-server (Debian's package). */
export function natsServerBin(env: NodeJS.ProcessEnv = process.env): string {
  if (env.NATS_SERVER_BIN) return env.NATS_SERVER_BIN;
  const onPath = (env.PATH ?? '').split(delimiter).map((dir) => join(dir, 'nats-server')).find((path) => existsSync(path));
  return onPath ?? '/usr/sbin/nats-server';
}

export interface NatsServer {
  /** `nats://127.0.0.1:<port>`: the same across stop() and start(). */
  url: string;
  port: number;
  /** Its JetStream storage folder, kept across stop() and start(). */
  storeDir: string;
  /** Stops the server (SIGTERM, or SIGKILL with `kill`), keeping its port and storage for start(). */
  stop(options?: { kill?: boolean }): Promise<void>;
  /** Starts it again on the same port and storage. */
  start(): Promise<void>;
  /** Stops it and removes its storage. */
  close(): Promise<void>;
  /** What it logged, all runs together. */
  log(): string;
}

const READY = /Server is ready/;
const START_TIMEOUT_MS = 15_000;

/**
 * A nats-server of the test's own, with JetStream (-js), on a free loopback port and a temporary
 * storage folder, never the machine's shared server. Killed when the test process exits.
 */
export async function startNatsServer(): Promise<NatsServer> {
  const port = await freePort();
  const storeDir = await mkdtemp(join(tmpdir(), 'frg-nats-'));
  let child: ChildProcess | undefined;
  let output = '';
  const killOnExit = () => child?.kill('SIGKILL');
  process.on('exit', killOnExit);

  const start = async () => {
    const started = spawn(natsServerBin(), ['-js', '-sd', storeDir, '-a', '127.0.0.1', '-p', String(port)], { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    const from = output.length;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`nats-server did not start within ${START_TIMEOUT_MS} ms:\n${output.slice(-2000)}`)), START_TIMEOUT_MS);
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        if (READY.test(output.slice(from))) {
          clearTimeout(timer);
          resolve();
        }
      };
      started.stdout?.on('data', read);
      started.stderr?.on('data', read);
      started.on('error', (error) => { clearTimeout(timer); reject(error); });
      started.once('exit', (code) => { clearTimeout(timer); reject(new Error(`nats-server exited with ${code}:\n${output.slice(-2000)}`)); });
    });
  };

  const stop = async ({ kill = false } = {}) => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(kill ? 'SIGKILL' : 'SIGTERM');
    await exited;
  };

  await start();
  return {
    url: `nats://127.0.0.1:${port}`, port, storeDir, start, stop, log: () => output,
    async close() {
      await stop({ kill: true });
      process.off('exit', killOnExit);
      await rm(storeDir, { recursive: true, force: true });
    },
  };
}
