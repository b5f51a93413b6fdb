/**
 * `node test/bench/live-events.ts [--events=300]`
 *
 * Live events latency, the layer under GraphQL subscriptions: starts its own stack (booking
 * subgraph in-process, against a fresh database: PGlite in memory, or a fresh database on
 * DATABASE_URL's server) and a LiveEvents (in-process on PGlite, LISTEN on PostgreSQL), then
 * commits `events` outbox events one at a time through the booking subgraph's ORM. For each it
 * prints, as p50/p99/max: the write (transaction start to commit acknowledged) and the arrival at
 * the listener after the commit was acknowledged (negative: the listener had it first, as on
 * PGlite, where it is emitted before the committing call returns).
 */
import { pino } from 'pino';
import { TENANT_FILTER } from '../../subgraphs/platform/db/tenant.ts';
import { startLiveEvents } from '../../subgraphs/platform/webhooks/live.ts';
import { recordEvent } from '../../subgraphs/platform/webhooks/outbox.ts';
import { databaseUrls } from '../../subgraphs/platform/config.ts';
import { DEFAULT_CLIENT, startTestStack } from '../support/stack.ts';
import { waitFor } from '../webhooks/receiver.ts';
import { flag, percentile } from './args.ts';

const EVENTS = Math.round(flag('events', 300, 5000));

const t = await startTestStack({ subgraphs: ['booking'], env: { LOG_LEVEL: 'error' } });
const live = await startLiveEvents({ databaseUrls: databaseUrls(t.config), log: pino({ level: 'warn' }) });
try {
  const arrived = new Map<string, number>();
  live.subscribe((event) => arrived.set(event.resourceKey, performance.now()));
  const db = t.stack.subgraphs.find((s) => s.name === 'booking')!.db;
  const writes: number[] = [];
  const afterCommit: number[] = [];
  for (let i = 0; i < EVENTS; i += 1) {
    const key = `booking:bench-${i}`;
    const em = db.orm.em.fork();
    em.setFilterParams(TENANT_FILTER, { orgId: DEFAULT_CLIENT.org });
    const start = performance.now();
    await em.transactional(async (tx) => {
      recordEvent(tx, { type: 'booking.started', resourceKey: key, resourcePath: '/bench', resource: {} });
    });
    const committed = performance.now();
    await waitFor(() => arrived.has(key), 10_000, key);
    writes.push(committed - start);
    afterCommit.push((arrived.get(key) as number) - committed);
  }
  const stats = (values: number[]) =>
    `p50 ${percentile(values, 50).toFixed(2)} ms   p99 ${percentile(values, 99).toFixed(2)} ms   max ${percentile(values, 100).toFixed(2)} ms`;
  console.log(`live events, ${EVENTS} commits one at a time (${t.config.DATABASE_URL ? 'PostgreSQL, LISTEN/NOTIFY' : 'PGlite, in-process'}):`);
  console.log(`  write (transaction start -> commit acknowledged): ${stats(writes)}`);
  console.log(`  arrival at the listener after the commit was acknowledged: ${stats(afterCommit)}`);
} finally {
  await live.close();
  await t.close();
}
