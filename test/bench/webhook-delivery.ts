/**
 * Commit to webhook receiver latency, for the benchmarks that report it (webhook-latency.ts, and
 * `npm run bench:events` through NATS): starts its own stack (roadside and webhooks subgraphs,
 * in-process, on a fresh database: PGlite in memory, or a fresh database on DATABASE_URL's server,
 * with `env` on top, e.g. NATS_URL) and the default webhook settings, subscribes a receiver on
 * loopback, then moves `rescues` rescues through their lifecycle (4 status changes each), one change
 * at a time. For every event: the time from the commit of the change (the event's `timestamp`) to its
 * arrival at the receiver. Bounded: stops changing after `budgetMs`.
 */
import type { Config } from '../../subgraphs/platform/config.ts';
import { startTestStack } from '../support/stack.ts';
import { dispatch, provision, session, status } from '../roadside/helpers.ts';
import { startReceiver, waitFor } from '../webhooks/receiver.ts';

export interface WebhookLatency {
  /** Commit to arrival of each event, ms, in arrival order. */
  latencies: number[];
  config: Config;
}

export async function webhookLatency(options: { rescues: number; budgetMs: number; env?: Record<string, string> }): Promise<WebhookLatency> {
  const t = await startTestStack({ subgraphs: ['roadside', 'webhooks'], env: { LOG_LEVEL: 'error', WEBHOOK_ALLOW_LOOPBACK: 'true', ...options.env } });
  const receiver = await startReceiver();
  try {
    const sub = await t.request('POST', '/platform/webhooks/v1/subscriptions', { token: t.token, body: { url: `${receiver.url}/bench`, eventTypes: ['rescue.status_changed'] } });
    if (sub.status !== 201) throw new Error(`subscribe: ${sub.status} ${JSON.stringify(sub.body)}`);
    const reqIds: string[] = [];
    for (let i = 0; i < options.rescues; i += 1) {
      const member = await provision(t, t.token);
      reqIds.push((await dispatch(t, t.token, await session(t, t.token, [{ key: 'vin', value: member.vin }]))).body.requestId);
    }
    const started = Date.now();
    let sent = 0;
    for (const next of ['EN-ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED']) {
      for (const reqId of reqIds) {
        if (Date.now() - started > options.budgetMs) break;
        const res = await status(t, t.token, reqId, next);
        if (res.status !== 200) throw new Error(`status ${next}: ${res.status}`);
        sent += 1;
        // One change at a time, spaced like a live feed, so each event's latency is its own.
        await new Promise((r) => setTimeout(r, 25));
      }
    }
    await waitFor(() => receiver.received.length >= sent, 30_000, `${sent} deliveries`);
    return { latencies: receiver.received.map((r) => r.at - Date.parse(r.json.timestamp)), config: t.config };
  } finally {
    await receiver.close();
    await t.close();
  }
}
