/**
 * `node test/bench/risk-first-ready.ts [--runs=1]`
 *
 * A newcomer's first start: `node gateway/server.ts` (run from the current folder) on a fresh
 * DATA_DIR (PGlite on disk), a Risk Index request every 100 ms from the moment /healthz answers.
 * Prints, from the spawn: /healthz answering, the first Risk Index answer and its dataStatus, and
 * the first answer with `dataStatus: READY`. Bounded: `runs` starts, 300 s each at most.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { freePort } from '../support/child-server.ts';
import { flag } from './args.ts';

const RUNS = Math.round(flag('runs', 1, 5));
const LIMIT_MS = 300_000;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

for (let run = 1; run <= RUNS; run++) {
  const dataDir = await mkdtemp(join(os.tmpdir(), 'risk-first-ready-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const started = performance.now();
  const child = spawn(process.execPath, ['gateway/server.ts'], {
    env: { ...process.env, PORT: String(port), DATA_DIR: dataDir, PGLITE_IN_MEMORY: 'false', DATABASE_URL: '', LOG_LEVEL: 'warn',
      // Load shedding off: on a busy machine its 503s would hide when the data become ready.
      OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0' },
    stdio: 'ignore',
  });
  const at: { healthz?: number; first?: number; firstStatus?: string; ready?: number } = {};
  try {
    while (at.ready === undefined && performance.now() - started < LIMIT_MS && child.exitCode === null) {
      if (at.healthz === undefined) {
        if (await fetch(`${base}/healthz`).then((r) => r.ok, () => false)) at.healthz = performance.now() - started;
      } else {
        const res = await fetch(`${base}/riskIndex/v1/riskInfo?geometry=${encodeURIComponent('POINT(-118.25 34.05)')}`);
        const status = (await res.json() as { area?: { dataStatus?: string } }).area?.dataStatus ?? `HTTP ${res.status}`;
        const now = performance.now() - started;
        if (at.first === undefined) { at.first = now; at.firstStatus = status; }
        if (status === 'READY') at.ready = now;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    await rm(dataDir, { recursive: true, force: true });
  }
  console.log(`Run ${run}: /healthz ${seconds(at.healthz ?? NaN)}, first Risk Index answer ${seconds(at.first ?? NaN)} (${at.firstStatus}), `
    + `dataStatus READY ${seconds(at.ready ?? NaN)} after the spawn`);
}
console.log(`Load average: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs`);
