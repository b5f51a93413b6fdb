/**
 * `node test/bench/webhook-latency.ts [--rescues=40] [--budget=20]`
 *
 * Webhook delivery latency: starts its own stack (roadside and webhooks subgraphs, in-process, against
 * a fresh database: PGlite in memory, or a fresh database on DATABASE_URL's server) with the default
 * webhook settings, subscribes a receiver on loopback, then moves `rescues` rescues through their
 * lifecycle (4 status changes each). For every event it measures the time from the commit of the
 * change (the event's `timestamp`) to its arrival, signed, at the receiver, and prints p50/p90/p99/max
 * and the retry schedule the configuration gives. Bounded: stops changing after `budget` seconds.
 */
import { startTestStack } from '../support/stack.ts';
import { dispatch, provision, session, status } from '../roadside/helpers.ts';
import { startReceiver, waitFor } from '../webhooks/receiver.ts';
import { retrySchedule } from '../../subgraphs/webhooks/deliver.ts';
import { flag } from './args.ts';

const RESCUES = Math.round(flag('rescues', 40, 200));
const BUDGET_MS = flag('budget', 20, 60) * 1000;

const t = await startTestStack({ subgraphs: ['roadside', 'webhooks'], env: { LOG_LEVEL: 'error', WEBHOOK_ALLOW_LOOPBACK: 'true' } });
const receiver = await startReceiver();
try {
  const sub = await t.request('POST', '/platform/webhooks/v1/subscriptions', { token: t.token, body: { url: `${receiver.url}/bench`, eventTypes: ['rescue.status_changed'] } });
  if (sub.status !== 201) throw new Error(`subscribe: ${sub.status} ${JSON.stringify(sub.body)}`);
  const reqIds: string[] = [];
  for (let i = 0; i < RESCUES; i += 1) {
    const member = await provision(t, t.token);
    reqIds.push((await dispatch(t, t.token, await session(t, t.token, [{ key: 'vin', value: member.vin }]))).body.requestId);
  }
  const started = Date.now();
  let sent = 0;
  for (const next of ['EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED']) {
    for (const reqId of reqIds) {
      if (Date.now() - started > BUDGET_MS) break;
      const res = await status(t, t.token, reqId, next);
      if (res.status !== 200) throw new Error(`status ${next}: ${res.status}`);
      sent += 1;
      // One change at a time, spaced like a live feed, so each event's latency is its own.
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  await waitFor(() => receiver.received.length >= sent, 30_000, `${sent} deliveries`);
  const latencies = receiver.received.map((r) => r.at - Date.parse(r.json.timestamp)).sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil((p / 100) * latencies.length) - 1)];
  const { config } = t;
  console.log(`webhook delivery latency, commit -> receiver (${latencies.length} events, ${config.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}, poll ${config.WEBHOOK_POLL_INTERVAL_MS} ms):`);
  console.log(`  p50 ${pct(50)} ms   p90 ${pct(90)} ms   p99 ${pct(99)} ms   max ${latencies.at(-1)} ms`);
  const at = retrySchedule(config);
  const human = (s: number) => (s < 120 ? `${s} s` : s < 7200 ? `${(s / 60).toFixed(1)} min` : `${(s / 3600).toFixed(2)} h`);
  console.log(`retry schedule (base ${config.WEBHOOK_RETRY_BASE_MS} ms x 4^n, ${config.WEBHOOK_MAX_ATTEMPTS} attempts), attempt times after the event: ${at.map(human).join(', ')}`);
} finally {
  await receiver.close();
  await t.close();
}
