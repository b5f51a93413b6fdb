/**
 * `npm run bench:batches [-- --areas=2000] [--baseline=30] [--clients=2]`
 *
 * Batch scoring beside the interactive Risk Index, on the embedded default started as `npm start` would
 * (a child process, PGlite, the default RISK_* and RISK_BATCH_* settings): first `baseline` seconds of
 * interactive riskInfo requests alone (`clients` callers in a loop, each request a different 1 km area,
 * so no cache answers it), then the same callers while a job of `areas` depots (points buffered by
 * 0.01 degrees in Chicago and Los Angeles) runs. Prints the job's wall time (submission to SUCCEEDED)
 * and the interactive p50/p99 without and with the job (target: p99 within 2x), and writes them to
 * test/bench/results/batches.json. Bounded: at most 10,000 areas, 120 s of baseline, 8 callers.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { startChildServer, untilReady } from '../support/child-server.ts';
import { flag, percentile } from './args.ts';

const AREAS = Math.round(flag('areas', 2000, 10_000));
const BASELINE_S = flag('baseline', 30, 120);
const CLIENTS = Math.round(flag('clients', 2, 8));
const CLIENT = { id: 'batch-bench', secret: 'batch-bench-secret-0123456789abcdef' };
const CITIES = [[-87.9, 41.7, 0.3], [-118.5, 33.8, 0.6]] as const;

/** A deterministic stream of points in the two cities (mulberry32). */
function points(seed: number) {
  let s = seed;
  const next = () => {
    s = (s + 0x6d2b79f5) | 0;
    let r = Math.imul(s ^ (s >>> 15), 1 | s);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
  return () => {
    const [lon, lat, span] = CITIES[next() < 0.5 ? 0 : 1];
    return [+(lon + next() * span).toFixed(5), +(lat + next() * span).toFixed(5)] as const;
  };
}

const server = await startChildServer({
  NODE_ENV: 'production', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000000',
  BOOTSTRAP_CLIENT_ID: CLIENT.id, BOOTSTRAP_CLIENT_SECRET: CLIENT.secret,
});
try {
  const base = server.base;
  await untilReady(base, 600_000);
  const log = (what: string) => console.error(`${new Date().toISOString()} ${what}`);
  log('ready');
  const tokenRes = await fetch(`${base}/platform/oauth/v1/token`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ grant_type: 'client_credentials', client_id: CLIENT.id, client_secret: CLIENT.secret }),
  });
  const auth = { authorization: `Bearer ${((await tokenRes.json()) as { access_token: string }).access_token}` };

  const nextPoint = points(42);
  /** `clients` callers asking riskInfo of a new area each time until `done()`; every latency and every non-200. */
  async function interactive(done: () => boolean) {
    const ms: number[] = [];
    const refused: number[] = [];
    await Promise.all(Array.from({ length: CLIENTS }, async () => {
      while (!done()) {
        const [lon, lat] = nextPoint();
        const t0 = performance.now();
        const res = await fetch(`${base}/riskIndex/v1/riskInfo?geometry=${encodeURIComponent(`POINT(${lon} ${lat})`)}&radius=0.01`);
        await res.arrayBuffer();
        if (res.status === 200) ms.push(performance.now() - t0);
        else refused.push(res.status);
      }
    }));
    const round = (v: number) => Math.round(v * 10) / 10;
    return { requests: ms.length, refused: refused.length, p50: round(percentile(ms, 50)), p99: round(percentile(ms, 99)), max: round(Math.max(...ms)) };
  }

  // Warm until a 5 s window is answered in full (right after /readyz the first answers may still be refused).
  for (let i = 0; i < 60; i++) {
    const warmEnd = Date.now() + 5_000;
    const warm = await interactive(() => Date.now() > warmEnd);
    log(`warm-up: ${JSON.stringify(warm)}`);
    if (warm.requests > 0 && warm.refused === 0) break;
  }
  const baselineEnd = Date.now() + BASELINE_S * 1000;
  const without = await interactive(() => Date.now() > baselineEnd);
  log(`baseline: ${JSON.stringify(without)}`);

  const depot = points(7);
  const csv = ['id,wkt,radius', ...Array.from({ length: AREAS }, (_, i) => {
    const [lon, lat] = depot();
    return `depot-${i},POINT(${lon} ${lat}),0.01`;
  })].join('\n');
  const started = performance.now();
  const submitted = await fetch(`${base}/riskIndex/v1/batches`, { method: 'POST', headers: { ...auth, 'content-type': 'text/csv' }, body: csv });
  if (submitted.status !== 202) throw new Error(`${submitted.status} ${await submitted.text()}`);
  const { id } = await submitted.json() as { id: string };
  let job = { status: 'QUEUED', processed: 0, failedRows: 0 };
  const poll = (async () => {
    while (!['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status)) {
      await new Promise((r) => setTimeout(r, 250));
      job = await (await fetch(`${base}/riskIndex/v1/batches/${id}`, { headers: auth })).json() as typeof job;
      if (Math.random() < 0.02) log(`batch ${job.status} ${job.processed}/${AREAS}`);
    }
  })();
  const during = await interactive(() => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.status));
  await poll;
  const wallS = Math.round((performance.now() - started) / 100) / 10;

  const figures = {
    areas: AREAS, clients: CLIENTS, batch: { status: job.status, wallSeconds: wallS, areasPerSecond: Math.round((AREAS / wallS) * 10) / 10, failedRows: job.failedRows },
    interactiveWithout: without, interactiveDuring: during, p99Ratio: Math.round((during.p99 / without.p99) * 100) / 100,
  };
  console.log(JSON.stringify(figures, null, 2));
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(new URL('./results/batches.json', import.meta.url), `${JSON.stringify(figures, null, 2)}\n`);
} finally {
  await server.stop();
}
