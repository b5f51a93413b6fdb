/**
 * `npm run bench:events-list [-- --events=100000 --pages=200]`
 *
 * Events listed per second through `GET /platform/webhooks/v1/events`, with `--events` events of one
 * organisation in the history (and as many of another's): starts its own stack (the webhooks subgraph,
 * on loopback, against a fresh database: PGlite in memory, or a fresh database on DATABASE_URL's
 * server), writes the history and one delivery per event in bulk (1 in 100 FAILED, 1 in 50 PENDING, the
 * rest SUCCEEDED), then walks `--pages` pages of 100 newest first, one request at a time, for the whole
 * listing and for each filter. Prints the figures and writes JSON to test/bench/results/events-list.json.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { startTestStack } from '../support/stack.ts';
import { flag } from './args.ts';

const EVENTS = Math.round(flag('events', 100_000, 1_000_000));
const PAGES = Math.round(flag('pages', 200, 2_000));
const PAGE = 100;
const OTHER_ORG = 'org-bench-other';

const t = await startTestStack({
  subgraphs: ['webhooks'],
  env: { LOG_LEVEL: 'error', WEBHOOK_WORKER: 'false' },
});
try {
  const db = t.stack.subgraphs.find((s) => s.name === 'webhooks')!.db;
  const run = (sql: string, params: unknown[] = []) => db.orm.em.getConnection().execute(sql, params, 'all');
  const subscriptionId = crypto.randomUUID();
  await run(
    `insert into webhooks.webhook_subscriptions (id, org_id, url, event_types, secret, created_at)
    values (?, ?, 'https://receiver.example/h', '["rescue.status_changed"]', 'whsec_x', now())`,
    [subscriptionId, t.org],
  );
  const seeded = performance.now();
  for (const org of [t.org, OTHER_ORG]) {
    // One statement per 10,000 events: the history (one resource per 4 events, 3 types), then one delivery each.
    for (let from = 1; from <= EVENTS; from += 10_000) {
      const to = Math.min(EVENTS, from + 9_999);
      await run(
        `insert into webhooks.events (id, source, seq, org_id, type, resource_key, resource_path, resource, occurred_at, recorded_at)
        select gen_random_uuid(), 'roadside', n, ?, (array['rescue.status_changed', 'rescue.updated', 'booking.started'])[1 + n % 3],
          'rescue:r' || (n / 4), '/services/roadside/v1/rescue/reqId/r' || (n / 4),
          jsonb_build_object('requestId', 'r' || (n / 4), 'status', 'EN-ROUTE', 'eta', n % 60),
          now() - ((?::int - n) * interval '20 second'), now()
        from generate_series(?::int, ?::int) n`,
        [org, EVENTS, from, to],
      );
    }
  }
  await run(
    `insert into webhooks.webhook_deliveries (id, org_id, subscription_id, event_id, event_type, resource_key, source_seq, payload,
      status, attempts, next_attempt_at, attempt_log, created_at)
    select gen_random_uuid(), e.org_id, ?, e.id, e.type, e.resource_key, e.seq, '{}',
      case when e.seq % 100 = 0 then 'FAILED' when e.seq % 50 = 1 then 'PENDING' else 'SUCCEEDED' end, 1, now(), '[]'::jsonb, e.occurred_at
    from webhooks.events e where e.org_id = ?`,
    [subscriptionId, t.org],
  );
  await run('analyze webhooks.events');
  await run('analyze webhooks.webhook_deliveries');
  const seedMs = performance.now() - seeded;

  /** Walks up to PAGES pages of `query`, one request after the other; events per second over the walk. */
  async function walk(label: string, query: string) {
    let after: string | null = null;
    let listed = 0;
    let pages = 0;
    const started = performance.now();
    const latencies: number[] = [];
    while (pages < PAGES) {
      const began = performance.now();
      const url: string = `/platform/webhooks/v1/events?first=${PAGE}${query}${after ? `&after=${after}` : ''}`;
      const res = await t.request('GET', url, { token: t.token });
      latencies.push(performance.now() - began);
      if (res.status !== 200) throw new Error(`${label}: ${res.status} ${JSON.stringify(res.body)}`);
      listed += res.body.events.length;
      pages += 1;
      after = (res.body as { nextCursor: string | null }).nextCursor;
      if (!after) break;
    }
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const figure = {
      label,
      pages,
      listed,
      eventsPerSecond: Math.round(listed / seconds),
      pageP50Ms: +latencies[Math.floor(latencies.length / 2)].toFixed(1),
      pageP99Ms: +latencies[Math.floor(latencies.length * 0.99)].toFixed(1),
    };
    console.log(
      `${label.padEnd(34)} ${String(figure.listed).padStart(6)} events in ${pages} pages: ` +
        `${figure.eventsPerSecond} events/s, page p50 ${figure.pageP50Ms} ms, p99 ${figure.pageP99Ms} ms`,
    );
    return figure;
  }

  const database = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
  console.log(
    `${database}: ${EVENTS} events in the organisation (and ${EVENTS} in another), seeded in ${Math.round(seedMs)} ms; ` +
      `${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(1)}`,
  );
  const figures = [
    await walk('all, newest first', ''),
    await walk('type=rescue.updated', '&type=rescue.updated'),
    await walk('deliveryState=failed', '&deliveryState=failed'),
    await walk('deliveryState=delivered', '&deliveryState=delivered'),
    await walk('resource=rescue:r5000', '&resource=rescue:r5000'),
    await walk(
      'from..to (one day)',
      `&from=${new Date(Date.now() - 2 * 86_400_000).toISOString()}&to=${new Date(Date.now() - 86_400_000).toISOString()}`,
    ),
  ];
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(
    new URL('./results/events-list.json', import.meta.url),
    `${JSON.stringify(
      {
        database,
        events: EVENTS,
        pageSize: PAGE,
        cores: os.cpus().length,
        load: os.loadavg()[0],
        figures,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  await t.close();
}
