/**
 * Issue 20, item 8: a Risk Index flood from many addresses. `callers` concurrent callers, each from
 * its own loopback address (127.0.0.10, .11, ...), so the per-address rate limit does not hold them
 * back, ask for costly Risk Index answers for `seconds` (every data set of a city, the SVG map, the
 * same through GraphQL; half of them on areas shifted a little each time, so the cache of resolved
 * areas does not spare the geometry work) while /healthz is sampled every 50 ms from 127.0.0.1.
 * The server runs in a process of its own (risk-flood-server.ts) in the default configuration.
 *
 * Run by `npm run bench:abuse` (risk-abuse.ts); alone: `npx node test/bench/risk-flood.ts [--seconds=30]`.
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { percentile } from './args.ts';
import { box } from './risk-stack.ts';
import type { FloodServerMessage, FloodServerReply } from './risk-flood-server.ts';

export interface FloodOptions { seconds: number; callers: number }

const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const GRAPHQL = 'query Flood($wkt: WKT!) { riskIndex(wkt: $wkt) { area { cellsTouched } riskInfo { index riskiestCells { cell riskIndex } } accidentSummary { total byHourOfWeek { hourOfWeek crashes } } } }';
/** Chicago (~750 km², resolution 7) and a part of Los Angeles: hundreds of cells each. */
const CHICAGO = [-87.95, 41.7, -87.68, 42.0] as const;
const LOS_ANGELES = [-118.6, 33.8, -118.1, 34.2] as const;

/** The area, shifted by up to ~1 km when `vary` (a new area each time: the geometry work is done again). */
function area([w, s, e, n]: readonly number[], vary: boolean) {
  const dx = vary ? Math.round(Math.random() * 1000) / 100_000 : 0;
  const dy = vary ? Math.round(Math.random() * 1000) / 100_000 : 0;
  return box(w + dx, s + dy, e + dx, n + dy);
}

interface FloodRequest { method: 'GET' | 'POST'; path: string; body?: string }
const KINDS: ((vary: boolean) => FloodRequest)[] = [
  (vary) => ({ method: 'GET', path: `/riskIndex/v1/all?${new URLSearchParams({ geometry: area(CHICAGO, vary), limit: '1000' })}` }),
  (vary) => ({ method: 'GET', path: `/riskIndex/v1/map?${new URLSearchParams({ geometry: area(LOS_ANGELES, vary) })}` }),
  (vary) => ({ method: 'POST', path: '/graphql', body: JSON.stringify({ query: GRAPHQL, variables: { wkt: area(LOS_ANGELES, vary) } }) }),
];

/** One request through `agent` (bound to the caller's address): the status, and the Retry-After header. */
function send(base: URL, agent: http.Agent, request: FloodRequest) {
  return new Promise<{ status: number; retryAfter?: string }>((resolve, reject) => {
    const req = http.request({
      host: base.hostname, port: base.port, method: request.method, path: request.path, agent, timeout: 30_000,
      headers: request.body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body) } : {},
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(request.body);
  });
}

function startServer() {
  const child = fork(fileURLToPath(new URL('./risk-flood-server.ts', import.meta.url)), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const next = <T extends FloodServerReply['type']>(type: T) => new Promise<Extract<FloodServerReply, { type: T }>>((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`flood server exited (code ${code})`));
    child.once('exit', onExit);
    const onMessage = (message: FloodServerReply) => {
      if (message.type !== type) return;
      child.off('message', onMessage); child.off('exit', onExit);
      resolve(message as Extract<FloodServerReply, { type: T }>);
    };
    child.on('message', onMessage);
  });
  const send = (message: FloodServerMessage) => child.send(message);
  return {
    ready: next('ready'),
    start: () => send({ type: 'start' }),
    async stop() { const stopped = next('stopped'); send({ type: 'stop' }); return stopped; },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      send({ type: 'close' });
      const timer = setTimeout(() => child.kill(), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Runs the flood against a server of its own; prints and returns /healthz p50/p99/max, the flood's statuses and throughput. */
export async function manyAddressFlood({ seconds, callers }: FloodOptions) {
  const server = startServer();
  try {
    const ready = await server.ready;
    const base = new URL(ready.base);
    console.log(`many-address flood: ${callers} callers from 127.0.0.10-${9 + callers} for ${seconds} s against the risk-only gateway (${ready.database}, default configuration)`);
    const agents = Array.from({ length: callers }, (_, i) => new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: `127.0.0.${10 + i}` }));
    // Warm-up: each kind of request once (compiles, first reads).
    for (const kind of KINDS) await send(base, agents[0], kind(false));

    server.start();
    const health: number[] = [];
    let healthFailures = 0;
    const statuses: Record<string, number> = {};
    const latencies: number[] = [];
    let withoutRetryAfter = 0;
    const deadline = performance.now() + seconds * 1000;
    const healthAgent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.1' });
    const sampler = (async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const res = await send(base, healthAgent, { method: 'GET', path: '/healthz' }).catch(() => ({ status: 0 }));
        health.push(performance.now() - t0);
        if (res.status !== 200) healthFailures += 1;
        await sleep(50);
      }
    })();
    const caller = async (agent: http.Agent, i: number) => {
      for (let n = i; performance.now() < deadline; n++) {
        const t0 = performance.now();
        try {
          const res = await send(base, agent, KINDS[n % KINDS.length]!(n % 2 === 0));
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status === 503 && !res.retryAfter) withoutRetryAfter += 1;
        } catch { statuses.error = (statuses.error ?? 0) + 1; }
        latencies.push(performance.now() - t0);
      }
    };
    await Promise.all([sampler, ...agents.map(caller)]);
    const stats = await server.stop();
    for (const agent of [...agents, healthAgent]) agent.destroy();

    const total = latencies.length;
    const result = {
      callers, seconds,
      health: { samples: health.length, failures: healthFailures, p50: round(percentile(health, 50)), p99: round(percentile(health, 99)), max: round(Math.max(...health)) },
      flood: {
        requests: total, perSecond: round(total / seconds), statuses, served: statuses[200] ?? 0, servedPerSecond: round((statuses[200] ?? 0) / seconds),
        refusedWithoutRetryAfter: withoutRetryAfter, latencyMs: { p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)) },
      },
      server: { cpuSeconds: round(stats.cpuMicros / 1e6), eventLoopUtilization: round(stats.eventLoopUtilization, 2), profile: stats.profile },
      database: ready.database,
    };
    console.log(`  /healthz: p50 ${result.health.p50} ms, p99 ${result.health.p99} ms, max ${result.health.max} ms (${result.health.samples} samples, ${healthFailures} failed)`);
    console.log(`  flood: ${total} requests (${result.flood.perSecond}/s; ${Object.entries(statuses).map(([s, n]) => `${s}: ${n}`).join(', ')}), ${result.flood.servedPerSecond} answers 200/s, `
      + `latency p50 ${result.flood.latencyMs.p50} ms, p99 ${result.flood.latencyMs.p99} ms${withoutRetryAfter ? `, ${withoutRetryAfter} 503 without Retry-After` : ''}`);
    console.log(`  server: ${result.server.cpuSeconds} s CPU (threads included), event loop busy ${Math.round(stats.eventLoopUtilization * 100)}%${stats.profile ? `, profile ${stats.profile}` : ''}`);
    return result;
  } finally {
    await server.close();
  }
}

if (import.meta.main) {
  const { flag } = await import('./args.ts');
  await manyAddressFlood({ seconds: flag('seconds', 30, 30), callers: Math.round(flag('callers', 50, 50)) });
}
