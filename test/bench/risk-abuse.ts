/**
 * `npm run bench:abuse [-- --flood=20 --connections=200 --addresses-flood=30 --callers=50 --cost-aliases=30]`
 *
 * Issue 12's Risk Index cost figures. Starts the benchmark servers (server.ts, a child process) and
 * measures, on the embedded default (gateway executing the subgraphs in-process):
 * 1. the 600-position zig-zag (radius 5) on GET /riskIndex/v1/riskInfo and the 5,000-position one
 *    through GraphQL: answer time and status, and /healthz p50/p99 while they run;
 * 2. a bounded flood: `connections` concurrent heavy risk requests for `flood` seconds (the refused
 *    zig-zag and an 80-position zig-zag under the budget that keeps a worker busy for seconds),
 *    with /healthz p99 and the success rate of ordinary booking reads sent meanwhile;
 * 3. webhook starvation (webhook-starvation.ts): another organisation's delivery latency while one
 *    organisation has 25 receivers that never answer;
 * 4. issue 20's many-address flood (risk-flood.ts, a server of its own in the default configuration):
 *    `callers` callers from as many loopback addresses for `addresses-flood` seconds, /healthz p50/p99/max;
 * 5. issue 20's cost-bypass document (cost-bypass.ts; `--cost-aliases=N`, default 30).
 * Prints the figures and writes JSON to test/bench/results/risk-abuse-latest.json.
 */
import { fork } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { SERVER_ENV, type ServerMessage, type ServerReply, type ServerStats } from './protocol.ts';
import { generateHopKey } from '../../subgraphs/platform/internal-hop.ts';
import { zigzag } from '../support/zigzag.ts';
import { flag, percentile } from './args.ts';
import { describeStarvation, webhookStarvation } from './webhook-starvation.ts';
import { manyAddressFlood } from './risk-flood.ts';
import { costBypass } from './cost-bypass.ts';

process.env.INTERNAL_HOP_KEY ??= generateHopKey();

// Bounded, whatever is asked: the machine is shared.
const FLOOD_SECONDS = flag('flood', 20, 30);
const CONNECTIONS = Math.round(flag('connections', 200, 200));
const ADDRESSES_FLOOD_SECONDS = flag('addresses-flood', 30, 30);
const CALLERS = Math.round(flag('callers', 50, 50));
// Refused at once since issue 20; executed, 30 aliases answered 144 MB: ask for fewer to see the old behaviour.
const COST_ALIASES = Math.round(flag('cost-aliases', 30, 30));

const QUERY = 'query Risk($wkt: WKT!, $radius: Float) { riskIndex(wkt: $wkt, radius: $radius) { area { cellsTouched } riskInfo { index } } }';
const riskPath = (wkt: string, radius: number) => `/riskIndex/v1/riskInfo?${new URLSearchParams({ geometry: wkt, radius: String(radius) })}`;

const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const child = fork(fileURLToPath(new URL('./server.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...SERVER_ENV } });
const ready = await new Promise<Extract<ServerReply, { type: 'ready' }>>((resolve, reject) => {
  child.once('exit', (code) => reject(new Error(`benchmark server exited (code ${code}) before it was ready`)));
  child.on('message', (message: ServerReply) => { if (message.type === 'ready') resolve(message); });
});
let nextId = 1;
/** The server's CPU time and event-loop use since the last `reset` (BENCH_PROFILE=<folder>: a CPU profile of that span). */
function serverStats(type: 'reset' | 'read') {
  const id = nextId++;
  return new Promise<ServerStats>((resolve) => {
    const onMessage = (message: ServerReply) => {
      if (message.type === 'stats' && message.id === id) { child.off('message', onMessage); resolve(message.stats); }
    };
    child.on('message', onMessage);
    child.send({ type, id } satisfies ServerMessage);
  });
}
async function closeServer() {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.send({ type: 'close', id: 0 } satisfies ServerMessage);
  const timer = setTimeout(() => child.kill(), 20_000);
  await exited;
  clearTimeout(timer);
}

const base = ready.targets.gatewayInprocess.replace(/\/graphql$/, '');

/** /healthz every `everyMs` until stopped: the answer times, ms, and how many failed. */
function healthSampler(everyMs: number) {
  const times: number[] = [];
  let failures = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      const t0 = performance.now();
      try {
        const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        if (res.status !== 200) failures += 1;
      } catch { failures += 1; }
      times.push(performance.now() - t0);
      await sleep(everyMs);
    }
  })();
  return async () => { running = false; await done; return { samples: times.length, failures, p50: round(percentile(times, 50)), p99: round(percentile(times, 99)), max: round(Math.max(...times)) }; };
}

async function timed(request: () => Promise<Response>) {
  const t0 = performance.now();
  const res = await request();
  const body = await res.json() as { code?: string; limit?: string; errors?: { extensions?: { code?: string; limit?: string } }[] };
  const code = body.code ?? body.errors?.[0]?.extensions?.code ?? 'OK';
  const limit = body.limit ?? body.errors?.[0]?.extensions?.limit;
  return { ms: round(performance.now() - t0), status: res.status, code, limit };
}

/** Runs `request` `times` times in turn while /healthz is sampled: every answer, and the health figures. */
async function reproduce(name: string, request: () => Promise<Response>, times = 5) {
  const stop = healthSampler(5);
  const answers = [];
  for (let i = 0; i < times; i++) answers.push(await timed(request));
  const health = await stop();
  const first = answers[0];
  console.log(`${name}: ${first.status} ${first.code}${first.limit ? ` (limit ${first.limit})` : ''} in ${first.ms} ms (median of ${times}: ${percentile(answers.map((a) => a.ms), 50)} ms); /healthz meanwhile p50 ${health.p50} ms, p99 ${health.p99} ms, ${health.samples} samples, ${health.failures} failed`);
  return { name, answers, health };
}

const token = await (async () => {
  const res = await fetch(`${base}/platform/oauth/v1/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: ready.client.id, client_secret: ready.client.secret }).toString(),
  });
  if (!res.ok) throw new Error(`token: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
})();
const bookingRead = () => fetch(`${base}/shared-mobility-insights/v2/bookings?limit=10`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) });

/** Ordinary booking reads, `parallel` at a time, until stopped: success rate and latency. */
function bookingReader(parallel: number) {
  let running = true;
  let ok = 0;
  let failed = 0;
  const times: number[] = [];
  const statuses: Record<string, number> = {};
  const loop = async () => {
    while (running) {
      const t0 = performance.now();
      try {
        const res = await bookingRead();
        await res.arrayBuffer();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status === 200) ok += 1; else failed += 1;
      } catch { failed += 1; statuses.error = (statuses.error ?? 0) + 1; }
      times.push(performance.now() - t0);
      await sleep(20);
    }
  };
  const done = Promise.all(Array.from({ length: parallel }, loop));
  return async () => {
    running = false;
    await done;
    return { requests: ok + failed, successRate: round((100 * ok) / Math.max(1, ok + failed), 2), p50: round(percentile(times, 50)), p99: round(percentile(times, 99)), statuses };
  };
}

const results: Record<string, unknown> = {};
try {
  console.log(`servers up (${ready.database}); target: the in-process gateway ${base}`);
  const check = await bookingRead();
  if (check.status !== 200) throw new Error(`booking read answered ${check.status}: ${await check.text()}`);
  const warm = await timed(() => fetch(`${base}${riskPath('LINESTRING(-87.6766 41.8813, -87.6718 41.8814)', 0.002)}`));
  console.log(`ordinary corridor: ${warm.status} in ${warm.ms} ms`);

  results.costBypass = await costBypass(base, token, COST_ALIASES);
  results.rest600 = await reproduce('REST 600-position zig-zag, radius 5', () => fetch(`${base}${riskPath(zigzag(600), 5)}`));
  const gqlBody = JSON.stringify({ query: QUERY, variables: { wkt: zigzag(5000), radius: 5 } });
  results.graphql5000 = await reproduce('GraphQL 5,000-position zig-zag, radius 5', () => fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: gqlBody }));

  console.log(`flood: ${CONNECTIONS} connections of heavy risk requests for ${FLOOD_SECONDS} s, /healthz sampled every 50 ms, booking reads 4 at a time...`);
  const statuses: Record<string, number> = {};
  await serverStats('reset');
  const stopHealth = healthSampler(50);
  const stopReads = bookingReader(4);
  const flood = await autocannon({
    url: base, connections: CONNECTIONS, duration: FLOOD_SECONDS, timeout: 30,
    requests: [
      { method: 'GET', path: riskPath(zigzag(600), 5) },
      // Under the budget, yet seconds of buffering: what keeps the workers busy.
      { method: 'GET', path: riskPath(zigzag(80), 5) },
    ],
  }).on('response', (_client: unknown, status: number) => { statuses[status] = (statuses[status] ?? 0) + 1; });
  const health = await stopHealth();
  const reads = await stopReads();
  const server = await serverStats('read');
  const answered = flood.requests.total + reads.requests + health.samples;
  const loop = { cpuMicrosPerRequest: Math.round(server.cpuMicros / Math.max(1, answered)), eventLoopUtilization: round(server.eventLoopUtilization, 2) };
  results.flood = { connections: CONNECTIONS, seconds: FLOOD_SECONDS, riskRequests: flood.requests.total, riskStatuses: statuses, riskLatencyMs: { p50: flood.latency.p50, p99: flood.latency.p99 }, health, bookingReads: reads, server: loop };
  console.log(`  risk requests: ${flood.requests.total} answered (${Object.entries(statuses).map(([s, n]) => `${s}: ${n}`).join(', ')}), p50 ${flood.latency.p50} ms, p99 ${flood.latency.p99} ms`);
  console.log(`  /healthz meanwhile: p50 ${health.p50} ms, p99 ${health.p99} ms, max ${health.max} ms, ${health.samples} samples, ${health.failures} failed`);
  console.log(`  server process: ${loop.cpuMicrosPerRequest} µs CPU per answer (threads included), event loop busy ${Math.round(loop.eventLoopUtilization * 100)}%`);
  console.log(`  booking reads meanwhile: ${reads.requests}, success ${reads.successRate}% (${JSON.stringify(reads.statuses)}), p50 ${reads.p50} ms, p99 ${reads.p99} ms`);
} finally {
  await closeServer();
}
// Issue 20, item 3: its own stack, after the Risk Index servers are gone.
const starvation = await webhookStarvation();
console.log(describeStarvation(starvation));
results.webhookStarvation = starvation;
results.manyAddressFlood = await manyAddressFlood({ seconds: ADDRESSES_FLOOD_SECONDS, callers: CALLERS });
const report = { at: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version, load: os.loadavg().map((l) => round(l, 2)) }, database: ready.database, ...results };
const dir = fileURLToPath(new URL('./results/', import.meta.url));
await mkdir(dir, { recursive: true });
await writeFile(`${dir}risk-abuse-latest.json`, `${JSON.stringify(report, null, 2)}\n`);
console.log(`results written to ${dir}risk-abuse-latest.json`);
