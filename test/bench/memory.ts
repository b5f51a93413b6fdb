/**
 * `npm run bench:memory`: idle resident memory of `npm start` by component. Starts `npm start`'s
 * command as start.ts does on an empty DATA_DIR (the embedded default, PGlite) with this bench's
 * probe preloaded (memory-probe.ts, which answers over the IPC channel only this bench opens; nothing
 * more listens), lets the first start finish its data load, stops it, and restarts on the same
 * folder as a user usually meets it. Prints, idle and after a full GC, the RSS split by component
 * (memory-report.ts); then the same after `--load=10` seconds of the `user` and `risk` requests (4
 * connections each), to see what grows. `--idle=5` seconds of idle before each idle report.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { backgroundLoadDone, BENCH_CLIENT, cpuSeconds, loadedDefault, startOnce, stop } from './start.ts';
import { components, MiB, type MemoryReport, type ProbeRequest } from './memory-report.ts';
import { scenarios, seed, token, type ScenarioContext } from './scenarios.ts';
import { SupergraphInfo } from './schema.ts';
import type { Targets } from './protocol.ts';

const flag = (name: string, fallback: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const idleSeconds = Math.min(flag('idle', 5), 60);
const loadSeconds = Math.min(flag('load', 10), 60);

const PROBE = ['--expose-gc', '--import', './test/bench/memory-probe.ts'];

let nextId = 1;
function probe(child: ChildProcess, collect: boolean): Promise<MemoryReport> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the memory probe did not answer')), 30_000);
    const listen = (message: { type?: string; id?: number; report?: MemoryReport }) => {
      if (message.type !== 'memory' || message.id !== id) return;
      clearTimeout(timer);
      child.off('message', listen);
      resolve(message.report!);
    };
    child.on('message', listen);
    child.send({ type: 'memory', id, collect } satisfies ProbeRequest);
  });
}

const idle = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** The `user` and `risk` requests of `npm run bench` (variant `gateway`) against one server, at once. */
async function load(url: string, pid: number, seconds: number) {
  const targets = { gateway: url, direct: {} } as unknown as Targets;
  const base = { targets, subgraphs: ['scoring', 'risk'], schema: new SupergraphInfo(), token: await token(url, BENCH_CLIENT) };
  const ctx: ScenarioContext = { ...base, seed: await seed(base, 0) };
  const requests = ['user', 'risk'].map((name) => scenarios.find((s) => s.name === name)!.measurements(ctx).find((m) => m.variant === 'gateway')!);
  // The first Risk Index request of the process: its first evaluation (and a geometry thread's start, were they started lazily).
  const started = performance.now();
  const first = await fetch(requests[1].url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: requests[1].body });
  await first.text();
  const firstRiskMs = Math.round(performance.now() - started);
  const cpuBefore = await cpuSeconds(pid);
  const results = await Promise.all(requests.map((m) => autocannon({
    url: m.url, connections: 4, duration: seconds, timeout: 10,
    requests: [{ method: m.method, body: m.body, headers: { 'content-type': 'application/json', ...(m.auth ? { authorization: `Bearer ${ctx.token}` } : {}) } }],
  })));
  const cpuMicros = ((await cpuSeconds(pid)) - cpuBefore) * 1e6 / results.reduce((n, r) => n + r.requests.total, 0);
  return `first Risk Index request ${firstRiskMs} ms (HTTP ${first.status}); ${results.map((r, i) => `${['user', 'risk'][i]} ${Math.round(r.requests.average)} req/s (${r.non2xx + r.errors} errors${r.non2xx ? `: ${JSON.stringify(r.statusCodeStats)}` : ''})`).join(', ')}; ${Math.round(cpuMicros)} cpu µs/req over both`;
}

function print(title: string, report: MemoryReport) {
  console.log(`\n${title}`);
  console.log('| component | MiB | |\n|---|---:|---|');
  for (const row of components(report)) console.log(`| ${row.component} | ${row.MiB} | ${row.note} |`);
}

const dataDir = await mkdtemp(join(tmpdir(), 'frg-memory-'));
const env = loadedDefault(dataDir);
/** Every server started, stopped at the end even when a step fails. */
const children: ChildProcess[] = [];
const start = async () => {
  const started = await startOnce(dataDir, env, 1, PROBE);
  children.push(started.child);
  return started;
};
try {
  const first = await start();
  await backgroundLoadDone(first.url);
  await idle(idleSeconds);
  print(`first start on an empty DATA_DIR, its data load over, ${idleSeconds} s idle`, await probe(first.child, false));
  await stop(first.child);

  const settled = await start();
  await idle(idleSeconds);
  const restarted = await probe(settled.child, false);
  print(`restart (settled DATA_DIR), ${idleSeconds} s idle`, restarted);
  console.log(`\nmodule source loaded by the main thread, by package (largest 15 of ${restarted.modules.length}): ${restarted.modules.slice(0, 15)
    .map((m) => `${m.name} ${MiB(m.bytes)} MiB (${m.files})`).join(', ')}`);
  print('the same after a full GC (main isolate)', await probe(settled.child, true));
  const served = await load(settled.url, settled.child.pid!, loadSeconds);
  await idle(idleSeconds);
  print(`after ${loadSeconds} s of the user and risk requests (${served}), ${idleSeconds} s idle`, await probe(settled.child, false));
  print('the same after a full GC (main isolate)', await probe(settled.child, true));
} finally {
  for (const child of children) await stop(child);
  await rm(dataDir, { recursive: true, force: true });
}
