/**
 * `node --expose-gc test/bench/sse-reservations.ts [--attempts=10000] [--cap=10000] [--unopened-ms=60000]`
 *
 * The heap that unopened graphql-sse reservations (`PUT /graphql/stream`, never followed by their
 * stream) hold: starts its own stack (scoring subgraph in-process, PGlite in memory) with
 * SSE_RESERVATIONS_MAX_PER_CLIENT=`cap` and reservations dropped `unopened-ms` after they are made
 * (30 s in service; longer here, so that none expires before all are made), then one client makes
 * `attempts` reservations, 20 at a time. Prints the answers and the heap (after a full GC) before,
 * with the reservations held and once their expiry has passed. With `cap` at `attempts` every
 * reservation is held at once: the cost of each.
 */
import { startTestStack } from '../support/stack.ts';
import { flag } from './args.ts';

const ATTEMPTS = Math.round(flag('attempts', 10_000, 50_000));
const CAP = Math.round(flag('cap', 10_000, 50_000));
const UNOPENED_MS = Math.round(flag('unopened-ms', 60_000, 120_000));
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const heap = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
};
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

const t = await startTestStack({
  subgraphs: ['scoring'], env: { LOG_LEVEL: 'error', SSE_RESERVATIONS_MAX_PER_CLIENT: String(CAP) }, tuning: { reservationUnopenedMs: UNOPENED_MS },
});
try {
  const { token } = await t.clientFor('org-bench-reservations');
  const reserve = async () => (await t.request('PUT', '/graphql/stream', { token })).status;
  // Warm-up (compiled code, pools, caches) with another organisation's token, whose reservations expire before the end.
  const warm = await t.clientFor('org-bench-warm-up');
  for (let i = 0; i < 1_000; i++) await t.request('PUT', '/graphql/stream', { token: warm.token });
  await new Promise((resolve) => setTimeout(resolve, UNOPENED_MS + 500));
  const before = await heap();
  const answers: Record<number, number> = {};
  let sent = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: 20 }, async () => {
    while (sent < ATTEMPTS) {
      sent += 1;
      const status = await reserve();
      answers[status] = (answers[status] ?? 0) + 1;
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  const held = await heap();
  await new Promise((resolve) => setTimeout(resolve, UNOPENED_MS + 500));
  const expired = await heap();
  const granted = answers[201] ?? 0;
  console.log(`${ATTEMPTS} reservations attempted by one client in ${seconds.toFixed(1)} s (SSE_RESERVATIONS_MAX_PER_CLIENT=${CAP}): answers ${JSON.stringify(answers)}`);
  console.log(`  heap before:                    ${mib(before)}`);
  console.log(`  heap with them held (unopened): ${mib(held)}   (+${mib(held - before)} over before)`);
  console.log(`  heap ${UNOPENED_MS + 500} ms later:         ${mib(expired)}   (${mib(held - expired)} freed`
    + `${granted >= 1_000 ? `: ${Math.round((held - expired) / granted)} B per reservation granted` : ''})`);
} finally {
  await t.close();
}
