/**
 * `npm run bench -- workers` (PostgreSQL only: DATABASE_URL): `npm start` with WORKERS=1 and with
 * WORKERS=2, each on a fresh database of its own, loaded in turn (1, 2, 1, 2...) on the REST user
 * lookup; prints req/s of each and the ratio (issue target: WORKERS=2 >= 1.6x WORKERS=1). The load
 * generator runs on the same machine as the servers: on 2 cores it takes CPU from both.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { testDatabase } from '../support/database.ts';
import { startOnce, stop } from './start.ts';

const CLIENT = { id: 'bench-workers', secret: 'bench-workers-secret-0123456789' };

export interface WorkersResult { workers: number; requestsPerSecond: number; errors: number }

async function tokenFor(url: string) {
  const response = await fetch(`${url}/platform/oauth/v1/token`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT.id, client_secret: CLIENT.secret }).toString(),
  });
  if (!response.ok) throw new Error(`token: HTTP ${response.status}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

export async function measureWorkers(options: { duration: number; rounds: number; connections: number }, counts = [1, 2]): Promise<WorkersResult[]> {
  if (!process.env.DATABASE_URL) throw new Error('the workers comparison runs on PostgreSQL: set DATABASE_URL');
  const started: { workers: number; child: ChildProcess; url: string; path: string; token: string; dataDir: string; drop(): Promise<void> }[] = [];
  try {
    for (const workers of counts) {
      const database = await testDatabase();
      const dataDir = await mkdtemp(join(tmpdir(), 'frg-workers-'));
      const { child, url } = await startOnce(dataDir, {
        ...process.env, ...database.env, WORKERS: String(workers),
        BOOTSTRAP_CLIENT_ID: CLIENT.id, BOOTSTRAP_CLIENT_SECRET: CLIENT.secret, BOOTSTRAP_ORG: 'bench-workers', RATE_LIMIT_PER_MINUTE: '1000000000', OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
      });
      started.push({ workers, child, url, path: '', token: '', dataDir, drop: database.drop });
      const entry = started[started.length - 1];
      entry.token = await tokenFor(url);
      const created = await fetch(`${url}/shared-mobility-insights/v2/users`, {
        method: 'POST', headers: { authorization: `Bearer ${entry.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'workers-user', dateOfBirth: '1985-04-12', homeZip: '60601' }),
      });
      if (created.status !== 201) throw new Error(`seeding the user: HTTP ${created.status}`);
      entry.path = `${url}/shared-mobility-insights/v2/users/workers-user`;
    }
    const totals = new Map<number, { requests: number; seconds: number; errors: number }>(counts.map((n) => [n, { requests: 0, seconds: 0, errors: 0 }]));
    for (let round = 0; round < options.rounds; round++) {
      for (const s of started) {
        const result = await autocannon({ url: s.path, connections: options.connections, duration: options.duration, headers: { authorization: `Bearer ${s.token}` } });
        const total = totals.get(s.workers)!;
        total.requests += result.requests.total;
        total.seconds += result.duration;
        total.errors += result.errors + result.timeouts + result.non2xx;
      }
    }
    return counts.map((workers) => {
      const t = totals.get(workers)!;
      return { workers, requestsPerSecond: Math.round(t.requests / t.seconds), errors: t.errors };
    });
  } finally {
    for (const s of started) {
      await stop(s.child);
      await s.drop().catch(() => undefined);
      await rm(s.dataDir, { recursive: true, force: true });
    }
  }
}
