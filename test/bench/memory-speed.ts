/**
 * `npx node test/bench/memory-speed.ts [--rounds=4] [--duration=3] '<variant A>' '<variant B>'`: what a
 * memory setting costs in speed, both variants side by side in one run. A variant is `npm start`'s
 * command (package.json) with words added: `NAME=value` sets an environment variable (`NAME=` unsets
 * it, npm start's own too), `--name=value` a node option (replacing npm start's own); e.g.
 * `'MALLOC_ARENA_MAX=' ''` (glibc's default against npm start's) or `'' '--max-semi-space-size=8'`.
 * Each variant runs its own server on its own DATA_DIR (the embedded default, a settled restart as
 * memory.ts measures, its RSS taken after 5 s idle); the bench seeds a user, then loads both in
 * alternated rounds (ABBA) with the same mix (the `user`, `cross` and REST user requests in turn on 8
 * connections, request collapsing off so that every request does its whole work) and prints the
 * server CPU per request (its worker threads included) of every round, the medians, and the RSS after
 * the load. The machine's load weighs on both alike: quote `uptime`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { backgroundLoadDone, BENCH_CLIENT, cpuSeconds, loadedDefault, startOnce, stop } from './start.ts';
import { scenarios, seed, token, type Measurement, type ScenarioContext } from './scenarios.ts';
import { SupergraphInfo } from './schema.ts';
import type { Targets } from './protocol.ts';
import { flag } from './args.ts';

const rounds = Math.round(flag('rounds', 4, 20));
const duration = flag('duration', 3, 30);
const variants = process.argv.slice(2).filter((a) => !a.startsWith('--rounds=') && !a.startsWith('--duration='));
if (variants.length !== 2) throw new Error("give two variants, e.g. 'MALLOC_ARENA_MAX=' ''");

const parse = (variant: string) => {
  const words = variant.split(/\s+/).filter(Boolean);
  return {
    // An undefined value leaves the variable out of the server's environment, npm start's own included.
    env: Object.fromEntries(words.filter((w) => !w.startsWith('--')).map((w) => [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1) || undefined])),
    flags: words.filter((w) => w.startsWith('--')),
  };
};

const rssMiB = async (pid: number) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1]) / 102.4) / 10;
const idle = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function server(variant: string) {
  const { env, flags } = parse(variant);
  const dataDir = await mkdtemp(join(tmpdir(), 'frg-memory-speed-'));
  const settings = { ...loadedDefault(dataDir), REQUEST_COLLAPSING: 'false', ...env };
  const first = await startOnce(dataDir, settings, 1, flags);
  await backgroundLoadDone(first.url);
  await stop(first.child);
  const started = await startOnce(dataDir, settings, 1, flags);
  await idle(5);
  const idleRss = await rssMiB(started.child.pid!);
  const targets = { gateway: started.url, direct: {} } as unknown as Targets;
  const base = { targets, subgraphs: ['scoring', 'booking'], schema: new SupergraphInfo(), token: await token(started.url, BENCH_CLIENT) };
  const ctx: ScenarioContext = { ...base, seed: await seed(base, 5) };
  const requests = [['user', 'gateway'], ['cross', 'gateway'], ['rest', 'rest']].map(([name, v]) =>
    scenarios.find((s) => s.name === name)!.measurements(ctx).find((m) => m.variant === v)!);
  return { variant, dataDir, idleRss, child: started.child, url: started.url, token: ctx.token, requests, cpu: [] as number[] };
}
type Server = Awaited<ReturnType<typeof server>>;

async function round(s: Server, seconds: number) {
  const before = await cpuSeconds(s.child.pid!);
  const result = await autocannon({
    url: s.url, connections: 8, duration: seconds, timeout: 10,
    requests: s.requests.map((m: Measurement) => ({
      method: m.method, path: new URL(m.url).pathname, body: m.body,
      headers: { 'content-type': 'application/json', ...(m.auth ? { authorization: `Bearer ${s.token}` } : {}) },
    })),
  });
  if (result.non2xx + result.errors) throw new Error(`${s.variant}: ${result.non2xx + result.errors} failed requests ${JSON.stringify(result.statusCodeStats)}`);
  return ((await cpuSeconds(s.child.pid!)) - before) * 1e6 / result.requests.total;
}

const servers: Server[] = [];
try {
  for (const variant of variants) servers.push(await server(variant));
  for (const s of servers) await round(s, 1); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const s of r % 2 ? [...servers].reverse() : servers) s.cpu.push(await round(s, duration));
    console.log(`round ${r + 1}: ${servers.map((s) => `${JSON.stringify(s.variant)} ${Math.round(s.cpu.at(-1)!)} µs`).join(', ')}`);
  }
  await idle(5);
  const loadedRss = await Promise.all(servers.map((s) => rssMiB(s.child.pid!)));
  console.log('\n| variant | idle RSS MiB (settled restart, 5 s) | RSS after the load, 5 s idle | cpu µs/req, median of rounds | B / A, median of paired rounds |\n|---|---:|---:|---:|---:|');
  const ratios = servers[0].cpu.map((a, i) => servers[1].cpu[i] / a);
  servers.forEach((s, i) => console.log(`| ${JSON.stringify(s.variant)} | ${s.idleRss} | ${loadedRss[i]} | ${Math.round(median(s.cpu))} | ${i ? median(ratios).toFixed(3) : ''} |`));
} finally {
  for (const s of servers) {
    await stop(s.child);
    await rm(s.dataDir, { recursive: true, force: true });
  }
}
