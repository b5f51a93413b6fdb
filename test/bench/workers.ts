/**
 * `npm run bench -- workers` (PostgreSQL only: DATABASE_URL): `npm start` with WORKERS=1 and with
 * WORKERS=2, each on a fresh database of its own, every worker listening before the load starts,
 * loaded in turn (1, 2, 1, 2...) on the REST user lookup; prints req/s of each and the ratio (issue
 * target: WORKERS=2 >= 1.6x WORKERS=1). The load generator and PostgreSQL run on the same 2 cores
 * as the servers, so it also prints where the CPU went per request: the server processes (primary
 * and workers), the PostgreSQL backends of the server's database, and the load generator.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readdir, readFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import autocannon from 'autocannon';
import pg from 'pg';
import { testDatabase } from '../support/database.ts';
import { cpuSeconds, startOnce, stop } from './start.ts';

const CLIENT = { id: 'bench-workers', secret: 'bench-workers-secret-0123456789' };

/**
 * How far this machine runs two CPU-bound threads at once: hashing for `seconds` on one thread, then
 * on two at once; the summed work of the two over the one's (2 where the cores are free and real).
 */
export async function machineParallelism(seconds = 1): Promise<number> {
  const spin = (): Promise<number> => new Promise((resolve, reject) => {
    const worker = new Worker(`
      const { createHash } = require('node:crypto');
      const { parentPort, workerData } = require('node:worker_threads');
      const block = Buffer.alloc(64 * 1024, 1);
      const end = Date.now() + workerData * 1000;
      let n = 0;
      while (Date.now() < end) { createHash('sha256').update(block).digest(); n++; }
      parentPort.postMessage(n);`, { eval: true, workerData: seconds });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  const one = await spin();
  const [a, b] = await Promise.all([spin(), spin()]);
  return Math.round(((a + b) / one) * 100) / 100;
}

export interface WorkersResult {
  workers: number; requestsPerSecond: number; errors: number;
  /** CPU µs per request: server processes, PostgreSQL backends of its database, load generator. */
  cpuMicrosPerRequest: { server: number; postgres: number; loadGenerator: number };
  /** CPU seconds of all three per wall second (at most 2 on this machine). */
  coresBusy: number;
}

/** The process and its descendants (the cluster's workers). */
async function processTree(root: number): Promise<number[]> {
  const parents = new Map<number, number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    if (stat) parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of parents) if (ppid === tree[i]) tree.push(pid);
  return tree;
}

async function postgresBackends(databaseUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    return rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

const cpuOf = async (pids: number[]) => new Map(await Promise.all(pids.map(async (pid) => [pid, await cpuSeconds(pid)] as const)));
/** CPU seconds the processes used between two readings (a process gone by the second reading is left out). */
const cpuDelta = (before: Map<number, number>, after: Map<number, number>) =>
  [...after].reduce((sum, [pid, seconds]) => sum + (Number.isFinite(seconds) && Number.isFinite(before.get(pid)) ? seconds - before.get(pid)! : 0), 0);

async function tokenFor(url: string) {
  const response = await fetch(`${url}/platform/oauth/v1/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT.id, client_secret: CLIENT.secret }).toString(),
  });
  if (!response.ok) throw new Error(`token: HTTP ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

export async function measureWorkers(options: { duration: number; rounds: number; connections: number; warmup?: number }, counts = [1, 2]): Promise<WorkersResult[]> {
  if (!process.env.DATABASE_URL) throw new Error('the workers comparison runs on PostgreSQL: set DATABASE_URL');
  const started: { workers: number; child: ChildProcess; url: string; path: string; token: string; dataDir: string; databaseUrl: string; drop(): Promise<void> }[] = [];
  try {
    for (const workers of counts) {
      const database = await testDatabase();
      const dataDir = await mkdtemp(join(tmpdir(), 'frg-workers-'));
      const { child, url } = await startOnce(dataDir, {
        ...process.env, ...database.env, WORKERS: String(workers),
        BOOTSTRAP_CLIENT_ID: CLIENT.id, BOOTSTRAP_CLIENT_SECRET: CLIENT.secret, BOOTSTRAP_ORG: 'bench-workers', RATE_LIMIT_PER_MINUTE: '1000000000', OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
      }, workers);
      started.push({ workers, child, url, path: '', token: '', dataDir, databaseUrl: database.env.DATABASE_URL, drop: database.drop });
      const entry = started[started.length - 1];
      entry.token = await tokenFor(url);
      const created = await fetch(`${url}/shared-mobility-insights/v2/users`, {
        method: 'POST', headers: { authorization: `Bearer ${entry.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'workers-user', dateOfBirth: '1985-04-12', homeZip: '60601' }),
      });
      if (created.status !== 201) throw new Error(`seeding the user: HTTP ${created.status}`);
      entry.path = `${url}/shared-mobility-insights/v2/users/workers-user`;
    }
    for (const s of started) {
      if (options.warmup) await autocannon({ url: s.path, connections: options.connections, duration: options.warmup, headers: { authorization: `Bearer ${s.token}` } });
    }
    const totals = new Map(counts.map((n) => [n, { requests: 0, seconds: 0, errors: 0, server: 0, postgres: 0, loadGenerator: 0 }]));
    for (let round = 0; round < options.rounds; round++) {
      for (const s of started) {
        // Every connection is opened by the load, after every worker listens: the primary hands them out in turn.
        const [servers, backends] = [await processTree(s.child.pid!), await postgresBackends(s.databaseUrl)];
        const before = { server: await cpuOf(servers), postgres: await cpuOf(backends), self: process.cpuUsage() };
        const result = await autocannon({ url: s.path, connections: options.connections, duration: options.duration, headers: { authorization: `Bearer ${s.token}` } });
        const self = process.cpuUsage(before.self);
        const total = totals.get(s.workers)!;
        total.requests += result.requests.total;
        total.seconds += result.duration;
        total.errors += result.errors + result.timeouts + result.non2xx;
        total.server += cpuDelta(before.server, await cpuOf(servers));
        // Backends the pool opened during the round are not counted: they appear in the next round's list.
        total.postgres += cpuDelta(before.postgres, await cpuOf(backends));
        total.loadGenerator += (self.user + self.system) / 1e6;
      }
    }
    const micros = (seconds: number, requests: number) => Math.round((seconds * 1e6) / Math.max(requests, 1));
    return counts.map((workers) => {
      const t = totals.get(workers)!;
      return {
        workers, requestsPerSecond: Math.round(t.requests / t.seconds), errors: t.errors,
        cpuMicrosPerRequest: { server: micros(t.server, t.requests), postgres: micros(t.postgres, t.requests), loadGenerator: micros(t.loadGenerator, t.requests) },
        coresBusy: Math.round(((t.server + t.postgres + t.loadGenerator) / t.seconds) * 100) / 100,
      };
    });
  } finally {
    for (const s of started) {
      await stop(s.child);
      await s.drop().catch(() => undefined);
      await rm(s.dataDir, { recursive: true, force: true });
    }
  }
}
