/**
 * `npm run bench:subscriptions [-- --events=100] [--held=2000] [--fanout=200] [--burst=10] [--budget=30]`
 *
 * GraphQL subscriptions (graphql-ws on /graphql), each gateway a child process started as
 * `npm start` would (gateway/server.ts), on loopback:
 * 1. latency, same process (embedded PGlite, the default): one subscriber to `rescueUpdated`, `events`
 *    position reports through the same gateway one after the other; for each, the rescue's
 *    `updatedAt` (taken just before the transaction that commits the change) to the result's arrival;
 * 2. latency across processes (PostgreSQL; DATABASE_URL's server, else the machine's): the subscriber
 *    on gateway A, the reports through gateway B, and through A itself for comparison;
 * 3. subscriptions held and memory: `held` subscriptions, each on its own WebSocket, on the embedded
 *    gateway; its RSS and heap used (its /metrics, after a full collection) before and after, per
 *    subscription; its CPU while opening them, and while holding them with no event for 10 s;
 * 4. CPU per event per subscriber: `burst` reports with one subscriber, then with `fanout` subscribers
 *    to the same rescue; the gateway's CPU time (its /metrics) of the difference, per event per
 *    extra subscriber.
 * Bounded: flags are capped, the latency loops stop after `budget` seconds each.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { freePort, startChildServer, type ChildServer } from '../support/child-server.ts';
import { testDatabase } from '../support/database.ts';
import { gatewayClient } from '../support/http.ts';
import { wsClient } from '../support/subscriptions.ts';
import { subscriptionsHeld, untilHeld } from '../support/subscriptions-held.ts';
import { dispatch, provision, session } from '../roadside/helpers.ts';
import { flag, percentile } from './args.ts';
import { collectGarbage, processFigures as figuresAt } from './process-figures.ts';

const EVENTS = Math.round(flag('events', 100, 1000));
const HELD = Math.round(flag('held', 2000, 5000));
const FANOUT = Math.round(flag('fanout', 200, 1000));
const BURST = Math.round(flag('burst', 10, 100));
const BUDGET_MS = flag('budget', 30, 120) * 1000;
const POSTGRES = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const OPERATOR = { id: 'bench-operator', secret: 'bench-operator-secret-0123456789' };
const RESCUE_UPDATED = 'subscription Track($reqId: ID!) { rescueUpdated(reqId: $reqId) { id status etaMinutes updatedAt } }';
const READ = 'query Read($reqId: ID!) { rescue(reqId: $reqId) { id status etaMinutes updatedAt } }';
const REPORT = 'mutation Report($reqId: ID!, $lat: Float!) { updateRescueStatus(input: { reqId: $reqId, status: EN_ROUTE, latitude: $lat, longitude: -87.636 }) { status } }';

/** What every gateway of the run shares: the bootstrap client, limits out of the way, the same signing keys. */
async function baseEnv(): Promise<Record<string, string>> {
  const pair = await generateKeyPair('EdDSA', { extractable: true });
  return {
    LOG_LEVEL: 'error', BOOTSTRAP_CLIENT_ID: OPERATOR.id, BOOTSTRAP_CLIENT_SECRET: OPERATOR.secret, BOOTSTRAP_ORG: 'org-bench',
    RATE_LIMIT_PER_MINUTE: '100000000', TOKEN_RATE_LIMIT_PER_MINUTE: '1000000', TOKEN_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000',
    SUBSCRIPTIONS_MAX_PER_CLIENT: String(HELD + FANOUT + 10), SUBSCRIPTIONS_MAX_PER_PROCESS: String(HELD + FANOUT + 10),
    JWT_PRIVATE_KEY: await exportPKCS8(pair.privateKey), JWT_PUBLIC_KEY: await exportSPKI(pair.publicKey),
    MVR_ENCRYPTION_KEY: randomBytes(32).toString('base64'), INTERNAL_HOP_KEY: randomBytes(32).toString('base64url'),
  };
}

interface Gateway { server: ChildServer; request: ReturnType<typeof gatewayClient>['request']; token: string }

async function gateway(env: Record<string, string>): Promise<Gateway> {
  const server = await startChildServer(env);
  const { request, tokenFor } = gatewayClient(() => server.base);
  return { server, request, token: await tokenFor(OPERATOR.id, OPERATOR.secret) };
}

/** A dispatched rescue, booked through `g`. */
async function rescue(g: Gateway): Promise<string> {
  const member = await provision(g, g.token);
  const res = await dispatch(g, g.token, await session(g, g.token, [{ key: 'vin', value: member.vin }]));
  if (res.status >= 300) throw new Error(`dispatch: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { requestId: string }).requestId;
}

/** One position report (an EN_ROUTE again): one committed rescue.updated event. */
async function report(g: Gateway, reqId: string, i: number) {
  const res = await g.request('POST', '/graphql', { token: g.token, body: { query: REPORT, variables: { reqId, lat: 41.88 + (i % 100) / 10_000 } } });
  if ((res.body as { errors?: unknown }).errors) throw new Error(`report: ${JSON.stringify(res.body)}`);
}

const until = async (done: () => boolean, what: string, timeoutMs = 30_000) => {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
};

/** One subscriber on its own WebSocket: the arrival time of each result, and how to let it go. */
interface Arrivals { at: number[]; updatedAt: string[]; stop(): Promise<void> }

function subscribe(g: Gateway, reqId: string): Arrivals {
  const connection = wsClient(g.server.base, `Bearer ${g.token}`);
  const arrivals: Arrivals = { at: [], updatedAt: [], stop: async () => { unsubscribe(); await connection.dispose(); } };
  const unsubscribe = connection.client.subscribe<{ rescueUpdated: { updatedAt: string } }>({ query: RESCUE_UPDATED, variables: { reqId } }, {
    next: ({ data }) => { arrivals.at.push(Date.now()); arrivals.updatedAt.push(data!.rescueUpdated.updatedAt); },
    error: (error) => { throw new Error(`subscription ended: ${JSON.stringify(error)}`); },
    complete: () => {},
  });
  return arrivals;
}

/** `count` subscribers, opened `batch` at a time; resolves once the gateway holds them all. */
async function subscribeMany(g: Gateway, reqId: string, count: number, batch = 100): Promise<Arrivals[]> {
  const held = await subscriptionsHeld(g.server.base);
  const all: Arrivals[] = [];
  for (let i = 0; i < count; i += batch) {
    all.push(...Array.from({ length: Math.min(batch, count - i) }, () => subscribe(g, reqId)));
    await untilHeld(g.server.base, held + all.length, 60_000);
  }
  return all;
}

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

const env = await baseEnv();
const inspectPort = await freePort();
const embedded = await gateway({ ...env, PGLITE_IN_MEMORY: 'true', NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}` });
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

const database = await testDatabase(POSTGRES);
try {
  const shared = { ...env, ...database.env, PGLITE_IN_MEMORY: 'false' };
  const a = await gateway(shared);
  const b = await gateway(shared);
  try {
    say(`latency, same process (PostgreSQL): ${await latency(a, a)}; ${await queryRoundTrip(a)}`);
    say(`latency, across processes (PostgreSQL: subscriber on A, reports through B): ${await latency(a, b)}`);
  } finally {
    await Promise.all([a.server.stop(), b.server.stop()]);
  }
} finally {
  await database.drop();
}
console.log(`\n${lines.join('\n')}\n(${os.availableParallelism()} cores, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} at the end)`);
