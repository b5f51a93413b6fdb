/**
 * `npm run bench:events [-- --seconds=8 --rounds=2]`
 *
 * What recording events costs the writes that record them, on PostgreSQL (DATABASE_URL, else the
 * machine's postgres://root@127.0.0.1:5432/test; databases of its own, dropped after) and a nats-server
 * of its own (NATS_URL to use another). Each writer commits one outbox insert per transaction, as
 * pgbench would, on a connection of its own; 16 and 64 writers, side by side in one run, `--seconds` each,
 * `--rounds` times in turn (the order of the variants turning each round; the mean is printed):
 *
 * - quiet: the outbox table alone, nothing announcing or reading it (the reference);
 * - relay: the same table, with the area's relay publishing it on JetStream and deleting it (the path now);
 * - trigger: the same table with the former AFTER INSERT pg_notify trigger and one LISTEN connection (before).
 *
 * Prints commits per second, the ratio to quiet, what the relay published, and the load average; then
 * commit to webhook receiver latency through NATS (events-webhooks.ts).
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { pino } from 'pino';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { openDatabase, type Database } from '../../subgraphs/platform/db/orm.ts';
import { openEventBus } from '../../subgraphs/platform/events/open.ts';
import { startRelay } from '../../subgraphs/platform/events/relay.ts';
import { createLiveEventsTrigger } from '../../subgraphs/platform/webhooks/live-trigger.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { testDatabase } from '../support/database.ts';
import { startNatsServer } from '../support/nats-server.ts';
import { flag } from './args.ts';
import { webhookLatencyThroughNats } from './events-webhooks.ts';

const SECONDS = flag('seconds', 8, 60);
const ROUNDS = Math.round(flag('rounds', 2, 5));
const VARIANTS = ['quiet', 'relay', 'trigger'] as const;
const WRITERS = [16, 64];
const BASE = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const log = pino({ level: 'warn' });
const INSERT = `insert into "booking"."webhook_outbox" (event_id, org_id, type, resource_key, resource_path, resource, occurred_at)
  values (gen_random_uuid(), $1, 'booking.started', $2, '/shared-mobility-insights/v2/bookings/b', $3, now())`;

type Variant = (typeof VARIANTS)[number];

/** A database of its own with the booking area's schema (its migrations, outbox included). */
async function areaDatabase(): Promise<{ db: Database; url: string; drop(): Promise<void> }> {
  const database = await testDatabase(BASE, 'bench_events');
  const config = loadConfig({ ...database.env, NODE_ENV: 'test', LOG_LEVEL: 'warn', DB_POOL_MAX: '4' });
  const { name, entities, migrationsPath } = subgraphDefinitions.booking!;
  const db = await openDatabase(config, { name, entities, migrationsPath });
  return { db, url: database.env.DATABASE_URL!, async drop() { await db.close(); await database.drop(); } };
}

/** `writers` connections committing one insert each, as fast as they can, for SECONDS: commits per second. */
async function write(url: string, writers: number): Promise<number> {
  const clients = await Promise.all(Array.from({ length: writers }, async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return client;
  }));
  const until = performance.now() + SECONDS * 1000;
  let commits = 0;
  const started = performance.now();
  await Promise.all(clients.map(async (client, i) => {
    while (performance.now() < until) {
      await client.query(INSERT, ['org-bench', `booking:${i}-${commits}`, JSON.stringify({ id: commits, status: 'STARTED' })]);
      commits += 1;
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  await Promise.all(clients.map((c) => c.end()));
  return commits / elapsed;
}

const nats = process.env.NATS_URL ? undefined : await startNatsServer();
const bus = await openEventBus({ natsUrl: process.env.NATS_URL ?? nats!.url, retentionHours: 1, log });
const databases = { quiet: await areaDatabase(), relay: await areaDatabase(), trigger: await areaDatabase() };
const listener = new pg.Client({ connectionString: databases.trigger.url });
try {
  for (const sql of createLiveEventsTrigger('booking')) await databases.trigger.db.orm.em.getConnection().execute(sql);
  await listener.connect();
  await listener.query('listen live_events');
  let notified = 0;
  listener.on('notification', () => { notified += 1; });
  let published = 0;
  bus.live(() => { published += 1; });
  const relay = startRelay({ name: 'booking', db: databases.relay.db, bus, log, pollMs: 20, shared: true });

  const results: Record<number, Record<Variant, number[]>> = {};
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const writers of WRITERS) {
      results[writers] ??= { quiet: [], relay: [], trigger: [] };
      for (const variant of [...VARIANTS.slice(round % 3), ...VARIANTS.slice(0, round % 3)]) {
        results[writers][variant].push(await write(databases[variant].url, writers));
        loads.push(loadavg()[0]!);
      }
    }
  }
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const backlog = async () => Number((await databases.relay.db.orm.em.getConnection().execute('select count(*) as n from "booking"."webhook_outbox"'))[0]!.n);
  const left = await backlog();
  const drainStarted = performance.now();
  while (await backlog() > 0 && performance.now() - drainStarted < 120_000) await new Promise((r) => setTimeout(r, 200));
  const drainSeconds = (performance.now() - drainStarted) / 1000;
  await relay.stop();

  const fmt = (n: number) => Math.round(n).toLocaleString('en');
  console.log(`events: commits per second, one outbox insert per transaction, ${SECONDS} s per run, mean of ${ROUNDS}, PostgreSQL ${new URL(BASE).host}`);
  console.log('| writers | quiet outbox | relay to JetStream (now) | ratio | pg_notify trigger (before) | ratio |');
  console.log('|---:|---:|---:|---:|---:|---:|');
  for (const writers of WRITERS) {
    const [quiet, now, trigger] = VARIANTS.map((variant) => mean(results[writers]![variant]));
    console.log(`| ${writers} | ${fmt(quiet)} | ${fmt(now)} | ${(now / quiet).toFixed(2)}x | ${fmt(trigger)} | ${(trigger / quiet).toFixed(2)}x |`);
  }
  console.log(`relay: ${fmt(published)} events published on JetStream (live consumer count); ${fmt(left)} left in the outbox when the writes ended, drained in ${drainSeconds.toFixed(1)} s; pg_notify: ${fmt(notified)} notifications`);
  console.log(`load average (1 min) after each run: ${loads.map((l) => l.toFixed(2)).join(', ')}; now ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  // On a nats-server of its own: the stream above holds the writes' events, which new durable consumers would read first.
  process.env.DATABASE_URL = BASE;
  const hooks = await webhookLatencyThroughNats({ rescues: 40, budgetMs: 20_000 });
  console.log(`webhooks: commit -> receiver through NATS JetStream (relay, durable consumer, delivery), ${hooks.events} rescue events one at a time: `
    + `p50 ${hooks.p50} ms, p90 ${hooks.p90} ms, p99 ${hooks.p99} ms, max ${hooks.max} ms; load average now ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
} finally {
  await listener.end().catch(() => undefined);
  await Promise.all(Object.values(databases).map((d) => d.drop()));
  await bus.close();
  await nats?.close();
}
