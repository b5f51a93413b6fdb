/**
 * Start time as a new user meets it: `npm start`'s command (from package.json) on an empty
 * DATA_DIR and an empty compile cache until `/healthz` answers, then a restart on the same folder
 * (which resumes the data load the first start left unfinished: it was stopped at /healthz), then,
 * once that load is over, a settled restart as a user usually meets it, then the idle resident
 * memory of that last process. Run by run.ts (`npm run bench`, or `npm run bench -- start`);
 * `node test/bench/start.ts` alone prints the same figures.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { npmStart, ROOT } from '../support/npm-script.ts';

export interface StartResult {
  /** Seconds from spawning the process to the first 200 from /healthz, on an empty DATA_DIR. */
  firstStartSeconds: number;
  /** The same on the DATA_DIR the first start left (stopped at /healthz, its background data load unfinished). */
  restartSeconds: number;
  /** The same again once a start has finished its background data load (the usual restart). */
  settledRestartSeconds: number;
  /** CPU time (user + system) the process used until /healthz answered, first start and restart. */
  firstStartCpuSeconds: number;
  restartCpuSeconds: number;
  settledRestartCpuSeconds: number;
  /** Resident set size of the restarted process after it sat idle for a few seconds, MiB. */
  idleRssMiB: number;
}

const TIMEOUT_MS = 300_000;

/**
 * Spawns `npm start`'s command, resolves with the process, its URL and the seconds until /healthz
 * answered; with `listeners` > 1 (WORKERS), once that many processes printed their "listening" line.
 * `nodeOptions` go before npm start's arguments (e.g. memory.ts's probe), and then the process gets
 * an IPC channel to the caller.
 */
export async function startOnce(dataDir: string, env: NodeJS.ProcessEnv, listeners = 1, nodeOptions: string[] = []): Promise<{ child: ChildProcess; url: string; seconds: number; cpuSeconds: number }> {
  const started = performance.now();
  // The server's output (a log line per request) goes to a file beside DATA_DIR, as it would in
  // production, not through a pipe this process (the load generator of workers.ts) has to read.
  const logFile = `${dataDir}.log`;
  const log = await open(logFile, 'a');
  const command = npmStart();
  // An option given as `--name=value` replaces npm start's own `--name=...`, which, coming later, would win.
  const name = (option: string) => option.split('=')[0];
  const replaced = new Set(nodeOptions.filter((option) => option.includes('=')).map(name));
  const child = spawn(process.execPath, [...nodeOptions, ...command.args.filter((arg) => !(arg.includes('=') && replaced.has(name(arg))))], {
    cwd: ROOT,
    // npm start's own assignments are defaults the caller's env may override (memory-speed.ts).
    env: { ...command.env, ...env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'production' },
    stdio: nodeOptions.length ? ['ignore', log.fd, log.fd, 'ipc'] : ['ignore', log.fd, log.fd],
  });
  await log.close();
  logFiles.set(child, logFile);
  let exited: number | null | undefined;
  child.once('exit', (code) => { exited = code; });
  const output = () => readFile(logFile, 'utf8').catch(() => '');
  let url: string | undefined;
  while (!url) {
    const matches = [...(await output()).matchAll(/listening at (http:\/\/[\d.:]+)/gi)];
    if (matches.length >= listeners) url = matches[0][1];
    else if (exited !== undefined) throw new Error(`server exited (code ${exited}) before listening:\n${(await output()).slice(-2000)}`);
    else if (performance.now() - started > TIMEOUT_MS) throw new Error(`no "listening" line within ${TIMEOUT_MS / 1000} s:\n${(await output()).slice(-2000)}`);
    else await new Promise((r) => setTimeout(r, 20));
  }
  for (;;) {
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) return { child, url, seconds: (performance.now() - started) / 1000, cpuSeconds: await cpuSeconds(child.pid!) };
    if (performance.now() - started > TIMEOUT_MS) throw new Error('/healthz did not answer');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const logFiles = new WeakMap<ChildProcess, string>();

export async function stop(child: ChildProcess) {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(timer);
  }
  const logFile = logFiles.get(child);
  if (logFile) await rm(logFile, { force: true });
}

/** utime + stime of a process (/proc/<pid>/stat, clock ticks of 1/100 s on Linux). */
export async function cpuSeconds(pid: number) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Waits until the Risk Index says its data load after `listen` is over (dataStatus no longer LOADING). */
export async function backgroundLoadDone(url: string) {
  const started = performance.now();
  const query = '{ riskIndex(wkt: "POINT (-87.6298 41.8781)") { area { dataStatus } } }';
  for (;;) {
    const status = await fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) })
      .then(async (r) => ((await r.json()) as { data?: { riskIndex: { area: { dataStatus: string } } } }).data?.riskIndex.area.dataStatus, () => undefined);
    if (status && status !== 'LOADING') return;
    if (performance.now() - started > TIMEOUT_MS) throw new Error(`the background data load did not finish (dataStatus ${status})`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function rssMiB(pid: number) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return Math.round((kb / 1024) * 10) / 10;
}

/**
 * The embedded default: no PostgreSQL, no remote subgraphs, keys generated under DATA_DIR; and an
 * empty compile cache, as after a fresh clone (a restart finds what the first start left).
 */
export const embeddedDefault = (env: NodeJS.ProcessEnv, dataDir: string): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(env).filter(([k]) => !/^(DATABASE_URL|PGLITE_IN_MEMORY|BOOTSTRAP_|JWT_|INTERNAL_HOP_|SUBGRAPH_TRANSPORT$|NODE_COMPILE_CACHE$|[A-Z]+_URL$)/.test(k))),
  NODE_COMPILE_CACHE: join(dataDir, '.compile-cache'),
});

/** The API client the memory benches make at their first start (BOOTSTRAP_CLIENT_*), to load the server with. */
export const BENCH_CLIENT = { id: 'memory-bench', secret: 'memory-bench-secret-0123456789abcdef' };

/** The embedded default for the memory benches: their client, and no rate limit or load shedding in their load. */
export const loadedDefault = (dataDir: string): NodeJS.ProcessEnv => ({
  ...embeddedDefault(process.env, dataDir),
  BOOTSTRAP_CLIENT_ID: BENCH_CLIENT.id, BOOTSTRAP_CLIENT_SECRET: BENCH_CLIENT.secret,
  RATE_LIMIT_PER_MINUTE: '1000000000',
  // Load shedding would answer part of the load with cheap 503s on a busy machine.
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
});

/** First start, restart and idle RSS of the embedded default (PGlite under a fresh DATA_DIR). */
export async function measureStart(env: NodeJS.ProcessEnv = process.env, idleSeconds = 5): Promise<StartResult> {
  const dataDir = await mkdtemp(join(tmpdir(), 'frg-start-'));
  const clean = embeddedDefault(env, dataDir);
  try {
    const first = await startOnce(dataDir, clean);
    await stop(first.child);
    const again = await startOnce(dataDir, clean);
    await backgroundLoadDone(again.url);
    await stop(again.child);
    const settled = await startOnce(dataDir, clean);
    await new Promise((r) => setTimeout(r, idleSeconds * 1000));
    const idleRssMiB = await rssMiB(settled.child.pid!);
    await stop(settled.child);
    const r2 = (n: number) => Math.round(n * 100) / 100;
    return {
      firstStartSeconds: r2(first.seconds), restartSeconds: r2(again.seconds),
      firstStartCpuSeconds: r2(first.cpuSeconds), restartCpuSeconds: r2(again.cpuSeconds),
      settledRestartSeconds: r2(settled.seconds), settledRestartCpuSeconds: r2(settled.cpuSeconds), idleRssMiB,
    };
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

export const describeStart = (r: StartResult) =>
  `first start ${r.firstStartSeconds} s (${r.firstStartCpuSeconds} s CPU; target < 10 s) ${r.firstStartSeconds < 10 ? 'met' : 'NOT met'}, ` +
  `restart ${r.restartSeconds} s (${r.restartCpuSeconds} s CPU, the first start's data load resumed; target < 4 s) ${r.restartSeconds < 4 ? 'met' : 'NOT met'}, ` +
  `settled restart ${r.settledRestartSeconds} s (${r.settledRestartCpuSeconds} s CPU; target < 4 s) ${r.settledRestartSeconds < 4 ? 'met' : 'NOT met'}, idle RSS ${r.idleRssMiB} MiB`;

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await measureStart();
  console.log(describeStart(result));
}
