/**
 * `node test/bench/webhook-latency.ts [--rescues=40] [--budget=20]`
 *
 * Webhook delivery latency (see webhook-delivery.ts) on the database the environment names, with the
 * event bus it names (NATS_URL, else in-process): prints p50/p90/p99/max, commit to receiver, and
 * the retry schedule the configuration gives.
 */
import { retrySchedule } from '../../subgraphs/webhooks/deliver.ts';
import { flag, percentile } from './args.ts';
import { webhookLatency } from './webhook-delivery.ts';

const { latencies, config } = await webhookLatency({ rescues: Math.round(flag('rescues', 40, 200)), budgetMs: flag('budget', 20, 60) * 1000 });
const pct = (p: number) => percentile(latencies, p);
console.log(`webhook delivery latency, commit -> receiver (${latencies.length} events, ${config.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}, ${config.NATS_URL ? 'NATS' : 'in-process bus'}):`);
console.log(`  p50 ${pct(50)} ms   p90 ${pct(90)} ms   p99 ${pct(99)} ms   max ${Math.max(...latencies)} ms`);
const at = retrySchedule(config);
const human = (s: number) => (s < 120 ? `${s} s` : s < 7200 ? `${(s / 60).toFixed(1)} min` : `${(s / 3600).toFixed(2)} h`);
console.log(`retry schedule (base ${config.WEBHOOK_RETRY_BASE_MS} ms x 4^n, ${config.WEBHOOK_MAX_ATTEMPTS} attempts), attempt times after the event: ${at.map(human).join(', ')}`);
