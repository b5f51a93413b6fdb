/**
 * `npm run bench:subscriptions [-- --events=100] [--held=2000] [--fanout=200] [--burst=10] [--budget=30] [--fan-events=5] [--pre-issue=ee31568|none] [--fan-out-only] [--nats-only]`
 *
 * GraphQL subscriptions (graphql-ws on /graphql), each gateway a child process started as
 * `npm start` would (gateway/server.ts), on loopback:
 * 1. latency, same process (embedded PGlite, the default): one subscriber to `rescueUpdated`, `events`
 *    position reports through the same gateway one after the other; for each, the rescue's
 *    `updatedAt` (taken just before the transaction that commits the change) to the result's arrival;
 * 0. shared fan-out and a hostile tenant, before (the code before issue 38, and this build with
 *    SUBSCRIPTIONS_FAN_OUT=per-subscriber) and after, side by side, on PGlite and (DATABASE_URL set) on
 *    PostgreSQL: see subscriptions-fan-out.ts;
 * 2. latency across processes (PostgreSQL, DATABASE_URL's server, else the machine's; a nats-server of
 *    the run's own as the event bus): the subscriber on gateway A, the reports through gateway B, and
 *    through A itself for comparison;
 * 3. subscriptions held and memory: `held` subscriptions, each on its own WebSocket, on the embedded
 *    gateway; its RSS and heap used (its /metrics, after a full collection) before and after, per
 *    subscription; its CPU while opening them, and while holding them with no event for 10 s;
 * 4. CPU per event per subscriber: `burst` reports with one subscriber, then with `fanout` subscribers
 *    to the same rescue; the gateway's CPU time (its /metrics) of the difference, per event per
 *    extra subscriber.
 * Bounded: flags are capped, the latency loops stop after `budget` seconds each.
 */
import os from 'node:os';
import { freePort } from '../support/child-server.ts';
import { testDatabase } from '../support/database.ts';
import { startNatsServer } from '../support/nats-server.ts';
import { subscriptionsHeld } from '../support/subscriptions-held.ts';
import { flag, percentile } from './args.ts';
import { collectGarbage, processFigures as figuresAt } from './process-figures.ts';
import { fanOutFigures } from './subscriptions-fan-out.ts';
import { baseEnv, gateway, report, rescue, subscribeMany, until, type Arrivals, type Gateway } from './subscription-gateways.ts';

const EVENTS = Math.round(flag('events', 100, 1000));
const HELD = Math.round(flag('held', 2000, 5000));
const FANOUT = Math.round(flag('fanout', 200, 1000));
const BURST = Math.round(flag('burst', 10, 100));
const BUDGET_MS = flag('budget', 30, 120) * 1000;
const POSTGRES = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
/** `--fan-out-only`: the shared fan-out, hostile tenant and PostgreSQL/NATS figures alone (a few minutes). */
const FAN_OUT_ONLY = process.argv.includes('--fan-out-only');
/** `--nats-only`: the PostgreSQL/NATS latencies alone (same process and across two gateways). */
const NATS_ONLY = process.argv.includes('--nats-only');
/**
 * The latency gateways lift the per-client execution budget: the latencies measure the path of an
 * event (commit, relay, bus, execution, socket), and their one subscriber's client takes far more
 * than the default 600 a minute (60 per 6 s window: 100 reports in 3 s), so its 61st event would
 * wait for the next window (seconds). The budget's own effect is measured by the fan-out scenarios.
 */
const UNBUDGETED = { SUBSCRIPTIONS_EXECUTIONS_PER_MINUTE: '100000000' };
const READ = 'query Read($reqId: ID!) { rescue(reqId: $reqId) { id status etaMinutes updatedAt } }';

/**
 * Commit (the rescue's updatedAt) to arrival of each of `EVENTS` reports sent through `via`, the
 * subscriber on `on`; and each report's own round trip (its transaction included), for scale.
 */
async function latency(on: Gateway, via: Gateway): Promise<string> {
  const reqId = await rescue(via);
  const [w] = await subscribeMany(on, reqId, 1);
  const reports: number[] = [];
  const started = Date.now();
  for (let i = 0; i < EVENTS && Date.now() - started < BUDGET_MS; i++) {
    const sent = performance.now();
    await report(via, reqId, i);
    reports.push(performance.now() - sent);
    await until(() => w!.at.length > i, `event ${i + 1}`);
  }
  await w!.stop();
  const ms = w!.at.map((at, i) => at - Date.parse(w!.updatedAt[i]!));
  return `${ms.length} events, p50 ${percentile(ms, 50)} ms, p99 ${percentile(ms, 99)} ms, max ${Math.max(...ms)} ms (the report's own round trip: p50 ${percentile(reports, 50).toFixed(1)} ms)`;
}

/** For scale: the query a subscription runs per event, as one HTTP request to `g` (round trip, p50 of 30). */
async function queryRoundTrip(g: Gateway): Promise<string> {
  const reqId = await rescue(g);
  const ms: number[] = [];
  for (let i = 0; i < 30; i++) {
    const started = performance.now();
    await g.request('POST', '/graphql', { token: g.token, body: { query: READ, variables: { reqId } } });
    ms.push(performance.now() - started);
  }
  return `the same query over HTTP: p50 ${percentile(ms, 50).toFixed(1)} ms`;
}

const processFigures = (g: Gateway) => figuresAt(g.server.base);
const settle = () => new Promise((r) => setTimeout(r, 2_000));
const IDLE_MS = 10_000;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const lines: string[] = [];
const say = (line: string) => { lines.push(line); console.log(line); };

const env = await baseEnv(HELD + FANOUT + 10);
if (!NATS_ONLY) await fanOutFigures(env, say);
if (!FAN_OUT_ONLY && !NATS_ONLY) {
  const inspectPort = await freePort();
  const embedded = await gateway({ ...env, ...UNBUDGETED, PGLITE_IN_MEMORY: 'true', NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}` });
  try {
    say(`latency, same process (PGlite): ${await latency(embedded, embedded)}; ${await queryRoundTrip(embedded)}`);

    const reqId = await rescue(embedded);
    await settle();
    await collectGarbage(inspectPort);
    const quiet = await processFigures(embedded);
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const before = await processFigures(embedded);
    const idleShare = (from: { cpuSeconds: number }, to: { cpuSeconds: number }) => `${((to.cpuSeconds - from.cpuSeconds) / (IDLE_MS / 1000) * 100).toFixed(1)}% of a core`;
    const started = performance.now();
    const held = await subscribeMany(embedded, reqId, HELD);
    const openMs = performance.now() - started;
    const opened = await processFigures(embedded);
    await settle();
    await collectGarbage(inspectPort);
    const after = await processFigures(embedded);
    say(`held: ${HELD} subscriptions on ${HELD} WebSockets, opened in ${(openMs / 1000).toFixed(1)} s (gateway CPU ${((opened.cpuSeconds - before.cpuSeconds) / HELD * 1000).toFixed(2)} ms per subscription opened); gateway RSS ${mb(before.rss)} -> ${mb(after.rss)}, heap used ${mb(before.heap)} -> ${mb(after.heap)}`);
    say(`memory per subscription (its socket included): RSS ${((after.rss - before.rss) / HELD / 1024).toFixed(1)} KB, heap ${((after.heap - before.heap) / HELD / 1024).toFixed(1)} KB`);
    // Held with no event, the gateway still checks every token again on its timer.
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const idle = await processFigures(embedded);
    say(`gateway CPU with no event: ${idleShare(after, idle)} holding ${HELD} subscriptions, ${idleShare(quiet, before)} holding none`);
    await Promise.all(held.map((w) => w.stop()));
    while (await subscriptionsHeld(embedded.server.base) > 0) await settle();

    const cpuOfBurst = async (subscribers: Arrivals[], rescueId: string) => {
      const known = subscribers.map((w) => w.at.length);
      const start = await processFigures(embedded);
      for (let i = 0; i < BURST; i++) await report(embedded, rescueId, i);
      await until(() => subscribers.every((w, n) => w.at.length >= known[n]! + BURST), `${BURST} events at ${subscribers.length} subscribers`, 120_000);
      return (await processFigures(embedded)).cpuSeconds - start.cpuSeconds;
    };
    const fanoutId = await rescue(embedded);
    const [first] = await subscribeMany(embedded, fanoutId, 1);
    const one = await cpuOfBurst([first!], fanoutId);
    const more = [first!, ...await subscribeMany(embedded, fanoutId, FANOUT - 1)];
    const many = await cpuOfBurst(more, fanoutId);
    const perEvent = ((many - one) / (BURST * (FANOUT - 1))) * 1e6;
    say(`CPU: ${BURST} events with 1 subscriber ${(one * 1000).toFixed(0)} ms, with ${FANOUT} subscribers ${(many * 1000).toFixed(0)} ms: ${perEvent.toFixed(0)} µs per event per extra subscriber`);
    await Promise.all(more.map((w) => w.stop()));
  } finally {
    await embedded.server.stop();
  }
}

const database = await testDatabase(POSTGRES);
const nats = await startNatsServer();
try {
  const shared = { ...env, ...UNBUDGETED, ...database.env, PGLITE_IN_MEMORY: 'false', NATS_URL: nats.url };
  const a = await gateway(shared);
  const b = await gateway(shared);
  try {
    say(`latency, same process (PostgreSQL): ${await latency(a, a)}; ${await queryRoundTrip(a)}`);
    say(`latency, across processes (PostgreSQL, NATS: subscriber on A, reports through B): ${await latency(a, b)}`);
  } finally {
    await Promise.all([a.server.stop(), b.server.stop()]);
  }
} finally {
  await nats.close();
  await database.drop();
}
console.log(`\n${lines.join('\n')}\n(${os.availableParallelism()} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at the end)`);
