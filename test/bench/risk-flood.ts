/**
 * Issue 20, item 8: a Risk Index flood from many addresses. `callers` concurrent callers, each from
 * its own loopback address (127.0.0.10, .11, ...), so the per-address rate limit does not hold them
 * back, ask for costly Risk Index answers for `seconds` (every data set of a city, the SVG map, the
 * same through GraphQL; half of them on areas shifted a little each time, so the cache of resolved
 * areas does not spare the geometry work) while /healthz is sampled every 50 ms from 127.0.0.1.
 * The server runs in a process of its own (risk-flood-server.ts) in the default configuration, the
 * callers in a worker thread (risk-flood-callers.ts): the samples time the server, not the callers.
 *
 * Run by `npm run bench:abuse` (risk-abuse.ts); alone: `npx node test/bench/risk-flood.ts [--seconds=30]`.
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { percentile } from './args.ts';
import { KINDS, send, type CallersResult, type CallersTask } from './risk-flood-callers.ts';
import type { FloodServerMessage, FloodServerReply } from './risk-flood-server.ts';

export interface FloodOptions { seconds: number; callers: number }

const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
    // Warm-up: each kind of request once (compiles, first reads).
    const warmAgent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.2' });
    for (const kind of KINDS) await send(base, warmAgent, kind(false));
    warmAgent.destroy();

    const loadBefore = loadavg()[0]!;
    server.start();
    const task: CallersTask = { base: ready.base, callers, seconds };
    const worker = new Worker(new URL('./risk-flood-callers.ts', import.meta.url), { workerData: task });
    const flood = new Promise<CallersResult>((resolve, reject) => { worker.once('message', resolve); worker.once('error', reject); });
    const health: number[] = [];
    let healthFailures = 0;
    const deadline = performance.now() + seconds * 1000;
    const healthAgent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.1' });
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const res = await send(base, healthAgent, { method: 'GET', path: '/healthz' }).catch(() => ({ status: 0 }));
      health.push(performance.now() - t0);
      if (res.status !== 200) healthFailures += 1;
      await sleep(50);
    }
    const { requests: total, statuses, withoutRetryAfter, p50, p99 } = await flood;
    const stats = await server.stop();
    healthAgent.destroy();
    await worker.terminate();

    const result = {
      callers, seconds,
      health: { samples: health.length, failures: healthFailures, p50: round(percentile(health, 50)), p99: round(percentile(health, 99)), max: round(Math.max(...health)) },
      flood: {
        requests: total, perSecond: round(total / seconds), statuses, served: statuses[200] ?? 0, servedPerSecond: round((statuses[200] ?? 0) / seconds),
        refusedWithoutRetryAfter: withoutRetryAfter, latencyMs: { p50: round(p50), p99: round(p99) },
      },
      server: { cpuSeconds: round(stats.cpuMicros / 1e6), eventLoopUtilization: round(stats.eventLoopUtilization, 2), profile: stats.profile },
      database: ready.database,
      // The machine's 1-minute load average before and after: the figures are only as quiet as the machine.
      machineLoad: [round(loadBefore, 2), round(loadavg()[0]!, 2)],
    };
    console.log(`  /healthz: p50 ${result.health.p50} ms, p99 ${result.health.p99} ms, max ${result.health.max} ms (${result.health.samples} samples, ${healthFailures} failed)`);
    console.log(`  flood: ${total} requests (${result.flood.perSecond}/s; ${Object.entries(statuses).map(([s, n]) => `${s}: ${n}`).join(', ')}), ${result.flood.servedPerSecond} answers 200/s, `
      + `latency p50 ${result.flood.latencyMs.p50} ms, p99 ${result.flood.latencyMs.p99} ms${withoutRetryAfter ? `, ${withoutRetryAfter} 503 without Retry-After` : ''}`);
    console.log(`  server: ${result.server.cpuSeconds} s CPU (threads included), event loop busy ${Math.round(stats.eventLoopUtilization * 100)}%${stats.profile ? `, profile ${stats.profile}` : ''}; machine load ${result.machineLoad.join(' -> ')}`);
    return result;
  } finally {
    await server.close();
  }
}

if (import.meta.main) {
  const { flag } = await import('./args.ts');
  await manyAddressFlood({ seconds: flag('seconds', 30, 30), callers: Math.round(flag('callers', 50, 50)) });
}
