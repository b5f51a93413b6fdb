/**
 * `npm run bench:idempotency [-- --runs=150 --bursts=15 --burst=50]`
 *
 * What an Idempotency-Key costs and how concurrent duplicates resolve: starts its own stack (the
 * scoring and registration subgraphs, on loopback, against a fresh database: PGlite in memory, or a
 * fresh database on DATABASE_URL's server), then
 * - latency of `POST /registration/v2/users` without a key, with a fresh key each time, and replayed;
 * - bursts of identical concurrent requests under one fresh key each: how many ran, got 409 or a replay,
 *   and how many users were created.
 * Prints the figures and writes JSON to test/bench/results/idempotency.json. Bounded by the flags (capped).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { countRows } from '../support/rows.ts';
import { startTestStack } from '../support/stack.ts';
import { flag } from './args.ts';

const RUNS = Math.round(flag('runs', 150, 1000));
const BURSTS = Math.round(flag('bursts', 15, 50));
const BURST = Math.round(flag('burst', 50, 200));
const PATH = '/registration/v2/users';

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: +quantile(sorted, 0.5).toFixed(2), p99: +quantile(sorted, 0.99).toFixed(2), max: +sorted[sorted.length - 1].toFixed(2) };
};

const t = await startTestStack({ subgraphs: ['scoring', 'registration'], env: { LOG_LEVEL: 'error' } });
try {
  let counter = 0;
  const post = (key?: string) => fetch(`${t.url}${PATH}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: '{}',
  }).then(async (res) => ({ status: res.status, replayed: res.headers.get('idempotent-replayed') === 'true', body: await res.text() }));

  async function timed(label: string, key: () => string | undefined, expected: number) {
    const samples: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      const res = await post(key());
      samples.push(performance.now() - started);
      if (res.status !== expected) throw new Error(`${label}: ${res.status} ${res.body}`);
    }
    return summary(samples);
  }
  // Warm-up, then each variant in turn.
  for (let i = 0; i < 20; i++) await post(`warm-${i}`);
  const noKey = await timed('no key', () => undefined, 201);
  const freshKey = await timed('fresh key', () => `bench-${++counter}`, 201);
  await post('bench-replayed');
  const replay = await timed('replay', () => 'bench-replayed', 201);

  const bursts: { ran: number; conflicts: number; replayed: number; created: number; ms: number }[] = [];
  for (let round = 0; round < BURSTS; round++) {
    const key = `burst-${round}`;
    const before = (await countRows(t.stack))['registration.RegisteredUser'];
    const started = performance.now();
    const answers = await Promise.all(Array.from({ length: BURST }, () => post(key)));
    const ms = performance.now() - started;
    const created = (await countRows(t.stack))['registration.RegisteredUser'] - before;
    const ran = answers.filter((a) => a.status === 201 && !a.replayed);
    const replays = answers.filter((a) => a.replayed);
    if (replays.some((a) => a.body !== ran[0]?.body)) throw new Error('a replay differs from the first answer');
    bursts.push({ ran: ran.length, conflicts: answers.filter((a) => a.status === 409).length, replayed: replays.length, created, ms });
  }
  const total = (field: 'ran' | 'conflicts' | 'replayed' | 'created') => bursts.reduce((sum, b) => sum + b[field], 0);
  const result = {
    when: new Date().toISOString(), database: process.env.DATABASE_URL ? 'postgresql' : 'pglite', cpus: os.cpus().length, runs: RUNS,
    latencyMs: { noKey, freshKey, replay },
    bursts: { rounds: BURSTS, concurrent: BURST, ran: total('ran'), conflicts: total('conflicts'), replayed: total('replayed'), created: total('created'), burstMs: summary(bursts.map((b) => b.ms)) },
  };
  console.log(`Idempotency-Key on POST ${PATH} (${result.database}, ${RUNS} sequential requests each):`);
  console.log(`  no key      p50 ${noKey.p50} ms  p99 ${noKey.p99} ms`);
  console.log(`  fresh key   p50 ${freshKey.p50} ms  p99 ${freshKey.p99} ms   (claim + store)`);
  console.log(`  replayed    p50 ${replay.p50} ms  p99 ${replay.p99} ms`);
  console.log(`Bursts: ${BURSTS} x ${BURST} identical concurrent requests, one key each: ${total('ran')} ran, ${total('conflicts')} x 409, ${total('replayed')} replayed, ${total('created')} users created; burst wall time p50 ${result.bursts.burstMs.p50} ms, max ${result.bursts.burstMs.max} ms`);
  const dir = new URL('./results/', import.meta.url).pathname;
  await mkdir(dir, { recursive: true });
  await writeFile(`${dir}idempotency.json`, `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await t.close();
}
