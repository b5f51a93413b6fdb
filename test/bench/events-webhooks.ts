/**
 * The webhook part of `npm run bench:events`: commit to webhook receiver through NATS JetStream (a
 * nats-server of the benchmark's own), on the database the environment names (DATABASE_URL for
 * PostgreSQL). See webhook-delivery.ts for what is measured.
 */
import { startNatsServer } from '../support/nats-server.ts';
import { percentile } from './args.ts';
import { webhookLatency } from './webhook-delivery.ts';

export interface WebhookFigures { events: number; p50: number; p90: number; p99: number; max: number }

export async function webhookLatencyThroughNats(options: { rescues: number; budgetMs: number }): Promise<WebhookFigures> {
  const nats = await startNatsServer();
  try {
    const { latencies } = await webhookLatency({ ...options, env: { NATS_URL: nats.url } });
    return {
      events: latencies.length, p50: percentile(latencies, 50), p90: percentile(latencies, 90), p99: percentile(latencies, 99), max: Math.max(...latencies),
    };
  } finally {
    await nats.close();
  }
}
