/**
 * `node test/bench/risk-cache.ts [--duration=5] [--connections=8] [--rounds=3]`
 *
 * The same public riskInfo request (Chicago's Loop, radius 0.02) on the embedded default started as
 * `npm start` would (child processes on loopback, PGlite in memory): evaluated every time (a server
 * with RISK_ANSWER_CACHE_MB=0), answered from the answer cache (a server with the default), and
 * revalidated with its ETag (304, no body: the tag is of the data's version and the request, so no
 * evaluation either way; measured on the server without the answer cache). Alternated rounds; prints
 * req/s, latency p50/p99 (ms), the server's CPU per request (µs, threads included, Linux /proc) and
 * the load average. Bounded: duration at most 20 s, connections at most 64, rounds at most 5.
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import autocannon, { type AutocannonResult } from 'autocannon';
import { startChildServer, type ChildServer } from '../support/child-server.ts';
import { flag } from './args.ts';

const DURATION = flag('duration', 5, 20);
const CONNECTIONS = Math.round(flag('connections', 8, 64));
const ROUNDS = Math.round(flag('rounds', 3, 5));
const PATH = `/riskIndex/v1/riskInfo?${new URLSearchParams({ geometry: 'POINT(-87.6298 41.8781)', radius: '0.02' })}`;
const CLOCK_TICK_US = 10_000;

/** User + system CPU of a process so far, µs (fields 14 and 15 of /proc/<pid>/stat); 0 where there is no /proc. */
function cpuMicros(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_US;
  } catch {
    return 0;
  }
}

const env = { NODE_ENV: 'production', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000000' };
const [cached, uncached] = [await startChildServer(env), await startChildServer({ ...env, RISK_ANSWER_CACHE_MB: '0' })];
type Row = 'evaluated' | 'cached' | 'revalidated';
const runs: Record<Row, { result: AutocannonResult; cpu: number }[]> = { evaluated: [], cached: [], revalidated: [] };
try {
  const first = await fetch(`${uncached.base}${PATH}`);
  const etag = first.headers.get('etag');
  const bytes = (await first.arrayBuffer()).byteLength;
  if (first.status !== 200 || !etag) throw new Error(`expected a 200 with an ETag, got ${first.status}`);
  const check = await fetch(`${uncached.base}${PATH}`, { headers: { 'if-none-match': etag } });
  if (check.status !== 304) throw new Error(`expected 304 on If-None-Match, got ${check.status}`);
  if ((await fetch(`${cached.base}${PATH}`)).headers.get('etag') !== etag) throw new Error('the two servers tag the same data differently');
  console.log(`riskInfo answer: ${bytes} bytes, ETag ${etag}`);
  const load = async (server: ChildServer, headers: Record<string, string>) => {
    const before = cpuMicros(server.child.pid);
    const result = await autocannon({ url: `${server.base}${PATH}`, connections: CONNECTIONS, duration: DURATION, headers });
    return { result, cpu: cpuMicros(server.child.pid) - before };
  };
  await load(uncached, {}); // warm-up
  await load(cached, {});
  for (let round = 0; round < ROUNDS; round++) {
    runs.evaluated.push(await load(uncached, {}));
    runs.cached.push(await load(cached, {}));
    runs.revalidated.push(await load(uncached, { 'if-none-match': etag }));
  }
} finally {
  await Promise.all([cached.stop(), uncached.stop()]);
}
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const row = (measured: { result: AutocannonResult; cpu: number }[]) => ({
  'req/s': Math.round(mean(measured.map((m) => m.result.requests.average))),
  'p50 ms': +mean(measured.map((m) => m.result.latency.p50)).toFixed(2),
  'p99 ms': +mean(measured.map((m) => m.result.latency.p99)).toFixed(2),
  'cpu µs/req': Math.round(measured.reduce((s, m) => s + m.cpu, 0) / Math.max(1, measured.reduce((s, m) => s + m.result.requests.total, 0))),
  errors: measured.reduce((n, m) => n + m.result.errors + m.result.timeouts, 0),
});
const table = {
  '200, evaluated (RISK_ANSWER_CACHE_MB=0)': row(runs.evaluated),
  '200, answer cache (default)': row(runs.cached),
  '304, If-None-Match (no evaluation)': row(runs.revalidated),
};
console.log(`riskInfo: ${CONNECTIONS} connections, ${ROUNDS} x ${DURATION} s alternated, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.table(table);
const evaluated = table['200, evaluated (RISK_ANSWER_CACHE_MB=0)'];
for (const name of ['200, answer cache (default)', '304, If-None-Match (no evaluation)'] as const) {
  console.log(`${name} / evaluated: ${(table[name]['req/s'] / evaluated['req/s']).toFixed(2)}x req/s, ${(evaluated['cpu µs/req'] / Math.max(1, table[name]['cpu µs/req'])).toFixed(1)}x less CPU per request`);
}
