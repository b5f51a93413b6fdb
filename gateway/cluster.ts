import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../subgraphs/platform/config.ts';
import { refuseCleanly } from '../subgraphs/platform/start-refused.ts';
import { clusterMetricsSource, serveMetrics } from './observability/metrics-server.ts';

const RESTART_DELAY_MS = 1_000;
const log = (message: string) => process.stderr.write(`${JSON.stringify({ level: 'info', time: Date.now(), name: 'cluster', pid: process.pid, msg: message })}\n`);

/**
 * WORKERS=N: N gateway processes (node:cluster) sharing one port. Everything they share lives in
 * PostgreSQL (clients, revocation, MVR key state) and, with REDIS_URL, Redis (limit counters), so
 * this needs DATABASE_URL: a PGlite data folder has one owner. The first worker starts alone (it
 * migrates and may create the development client), then the others; a worker that dies is replaced.
 * With METRICS_PORT this process serves every worker's metrics there, added up.
 */
export async function runCluster(config: Config): Promise<void> {
  if (!config.DATABASE_URL) {
    process.stderr.write(`\nRefusing to start: WORKERS=${config.WORKERS} needs PostgreSQL (DATABASE_URL). The embedded database (PGlite) has one owner process; unset WORKERS or set DATABASE_URL.\n\n`);
    process.exit(1);
  }
  if (!config.NATS_URL) log(`NATS_URL is not set: each of the ${config.WORKERS} workers hands the events its own relays publish to its own subscribers only (a subscriber on another worker misses them); set NATS_URL`);
  if (!config.REDIS_URL) log(`REDIS_URL is not set: each of the ${config.WORKERS} workers counts rate limits on its own (up to ${config.WORKERS} x RATE_LIMIT_PER_MINUTE per client)`);
  if (config.METRICS_PORT) await refuseCleanly(() => serveMetrics(clusterMetricsSource(), config));
  else log(`METRICS_PORT is not set: /metrics is not served (each of the ${config.WORKERS} workers would answer with its own part of the counts, a different part at each scrape); set METRICS_PORT to scrape them added up`);
  let stopping = false;
  const fork = () => cluster.fork();
  cluster.on('exit', (worker: Worker, code) => {
    if (stopping) return;
    log(`worker ${worker.process.pid} exited (${code}); starting another`);
    setTimeout(fork, RESTART_DELAY_MS);
  });
  cluster.once('listening', () => {
    for (let i = 1; i < config.WORKERS; i++) fork();
  });
  fork();
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: draining ${Object.keys(cluster.workers ?? {}).length} workers`);
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);
    Promise.all(workers.map((w) => new Promise<void>((resolve) => { w.once('exit', () => resolve()); w.process.kill('SIGTERM'); })))
      .then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
