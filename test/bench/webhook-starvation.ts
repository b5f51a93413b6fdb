/**
 * `npx node test/bench/webhook-starvation.ts [--seconds=20]` (also run by `npm run bench:abuse`)
 *
 * Issue 20, item 3: one organisation's hanging receivers must not delay another's deliveries.
 * Starts its own stack (roadside and webhooks subgraphs, default webhook settings, loopback allowed)
 * on a fresh database (PGlite in memory, or DATABASE_URL's server). Organisation A subscribes 25
 * receivers that read each request and never answer, and records a rescue event every 2 s;
 * organisation B subscribes one receiver that answers at once and records an event every 250 ms.
 * Prints B's delivery latency (commit -> arrival) p50/p99/max over `seconds` of that.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { dispatch, provision, session, status } from '../roadside/helpers.ts';
import { startReceiver, waitFor } from '../webhooks/receiver.ts';
import { flag, percentile } from './args.ts';

const WH = '/platform/webhooks/v1';
const HANGING_RECEIVERS = 25;

export interface StarvationFigures { database: string; hangingReceivers: number; eventsA: number; eventsB: number; p50: number; p99: number; max: number }

async function subscribe(t: TestStack, token: string, url: string) {
  const res = await t.request('POST', `${WH}/subscriptions`, { token, body: { url, eventTypes: ['rescue.status_changed'] } });
  if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Rescues of `token`'s organisation, dispatched and waiting for their first status change (the event). */
async function rescues(t: TestStack, token: string, count: number) {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const member = await provision(t, token);
    ids.push((await dispatch(t, token, await session(t, token, [{ key: 'vin', value: member.vin }]))).body.requestId);
  }
  return ids;
}

async function enRoute(t: TestStack, token: string, reqId: string) {
  const res = await status(t, token, reqId, 'EN-ROUTE');
  if (res.status !== 200) throw new Error(`status: ${res.status} ${JSON.stringify(res.body)}`);
}

export async function webhookStarvation(seconds = 20): Promise<StarvationFigures> {
  const t = await startTestStack({ subgraphs: ['roadside', 'webhooks'], env: { LOG_LEVEL: 'error', WEBHOOK_ALLOW_LOOPBACK: 'true' } });
  const receiver = await startReceiver();
  const held = new Set<IncomingMessage>();
  const hanging = createServer((req) => { held.add(req); req.resume(); });
  await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
  const hangingUrl = `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`;
  try {
    const a = await t.clientFor('org-starving-a');
    for (let i = 0; i < HANGING_RECEIVERS; i += 1) await subscribe(t, a.token, `${hangingUrl}/a-${i}`);
    await subscribe(t, t.token, `${receiver.url}/b`);
    const eventsA = Math.ceil(seconds / 2) + 4;
    const eventsB = Math.ceil(seconds * 4);
    const [rescuesA, rescuesB] = [await rescues(t, a.token, eventsA), await rescues(t, t.token, eventsB)];
    // The case: four events of A at once, then one every 2 s, while B's come every 250 ms.
    for (const reqId of rescuesA.splice(0, 4)) await enRoute(t, a.token, reqId);
    const until = Date.now() + seconds * 1000;
    let nextA = Date.now() + 2000;
    let sentB = 0;
    for (const reqId of rescuesB) {
      if (Date.now() > until) break;
      await enRoute(t, t.token, reqId);
      sentB += 1;
      if (Date.now() >= nextA && rescuesA.length) {
        await enRoute(t, a.token, rescuesA.shift()!);
        nextA += 2000;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await waitFor(() => receiver.received.length >= sentB, 120_000, `${sentB} deliveries to organisation B`);
    const latencies = receiver.received.map((r) => r.at - Date.parse(r.json.timestamp));
    return {
      database: t.config.DATABASE_URL ? 'PostgreSQL' : 'PGlite', hangingReceivers: HANGING_RECEIVERS, eventsA: eventsA - rescuesA.length, eventsB: sentB,
      p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: Math.max(...latencies),
    };
  } finally {
    hanging.closeAllConnections();
    await new Promise((resolve) => hanging.close(resolve));
    await receiver.close();
    await t.close();
  }
}

export const describeStarvation = (f: StarvationFigures) =>
  `webhook starvation (${f.database}): organisation B's delivery latency with ${f.hangingReceivers} hanging receivers in organisation A ` +
  `(${f.eventsA} events of A, ${f.eventsB} of B): p50 ${f.p50} ms, p99 ${f.p99} ms, max ${f.max} ms`;

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  console.log(describeStarvation(await webhookStarvation(flag('seconds', 20, 60))));
}
