/**
 * `node test/bench/risk-cache.ts [--duration=5] [--connections=8] [--rounds=3]`
 *
 * The same public riskInfo request (Chicago's Loop, radius 0.02) answered in full (200) and
 * revalidated with its ETag (304, no body), on the embedded default started as `npm start` would
 * (a child process on loopback, PGlite in memory). Alternated rounds; prints req/s and latency
 * p50/p99 (ms) of each, their ratio and the load average. The tag is of the answer's bytes, so a 304
 * saves the transfer and the client's parsing, not the evaluation. Bounded: duration at most 20 s,
 * connections at most 64, rounds at most 5.
 */
import os from 'node:os';
import autocannon, { type AutocannonResult } from 'autocannon';
import { startChildServer } from '../support/child-server.ts';
import { flag } from './args.ts';

const DURATION = flag('duration', 5, 20);
const CONNECTIONS = Math.round(flag('connections', 8, 64));
const ROUNDS = Math.round(flag('rounds', 3, 5));
const PATH = `/riskIndex/v1/riskInfo?${new URLSearchParams({ geometry: 'POINT(-87.6298 41.8781)', radius: '0.02' })}`;

const server = await startChildServer({ NODE_ENV: 'production', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000000' });
const runs: Record<'200' | '304', AutocannonResult[]> = { 200: [], 304: [] };
try {
  const first = await fetch(`${server.base}${PATH}`);
  const etag = first.headers.get('etag');
  const bytes = (await first.arrayBuffer()).byteLength;
  if (first.status !== 200 || !etag) throw new Error(`expected a 200 with an ETag, got ${first.status}`);
  const check = await fetch(`${server.base}${PATH}`, { headers: { 'if-none-match': etag } });
  if (check.status !== 304) throw new Error(`expected 304 on If-None-Match, got ${check.status}`);
  console.log(`riskInfo answer: ${bytes} bytes, ETag ${etag}`);
  const load = async (headers: Record<string, string>) => autocannon({ url: `${server.base}${PATH}`, connections: CONNECTIONS, duration: DURATION, headers });
  await load({}); // warm-up
  for (let round = 0; round < ROUNDS; round++) {
    runs[200].push(await load({}));
    runs[304].push(await load({ 'if-none-match': etag }));
  }
} finally {
  await server.stop();
}
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const row = (results: AutocannonResult[]) => ({
  'req/s': Math.round(mean(results.map((r) => r.requests.average))),
  'p50 ms': +mean(results.map((r) => r.latency.p50)).toFixed(2),
  'p99 ms': +mean(results.map((r) => r.latency.p99)).toFixed(2),
  errors: results.reduce((n, r) => n + r.errors + r.timeouts, 0),
});
const table = { '200 (full answer)': row(runs[200]), '304 (If-None-Match)': row(runs[304]) };
console.log(`riskInfo 200 vs 304: ${CONNECTIONS} connections, ${ROUNDS} x ${DURATION} s alternated, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
console.table(table);
console.log(`304 / 200 req/s: ${(table['304 (If-None-Match)']['req/s'] / table['200 (full answer)']['req/s']).toFixed(2)}x`);
