/**
 * Part of `npm run bench:subscriptions`: shared fan-out (issue 38), before and after side by side,
 * each on a gateway of its own, one after the other: on in-memory PGlite, and with DATABASE_URL set on
 * PostgreSQL too (a database of its own per mode, on DATABASE_URL's server):
 * - pre-issue: the code the issue measured, the last commit before its work (`--pre-issue=<rev>`,
 *   default ee31568; `--pre-issue=none` skips it), run from a `git archive` of it (revision.ts);
 * - per-subscriber: this build with SUBSCRIPTIONS_FAN_OUT=per-subscriber (one execution per subscriber
 *   and event, every one at once), SUBSCRIPTIONS_MAX_COST as GRAPHQL_MAX_COST and no execution budget
 *   to speak of: what sharing alone saves, the issue's other savings (row reads, literals) on both sides;
 * - after: the defaults (shared executions, 2 in flight per process, 600 a minute per client, cost 2000).
 * 1. fan-out: `subscribers` subscribers of one rescue, each on its own WebSocket, as 10 clients
 *    (identities) of one organisation; to warm up (JIT, first writes; not counted), 300 queries of the
 *    rescue per identity and `fan-events` position reports; then `fan-events` more, one after the
 *    other, each waited for at every subscriber, the gateway at rest before: its CPU per event
 *    (every thread, from /proc; the report's own included, and measured alone before anybody
 *    subscribes), the mean and the median of the events' (a pause or a neighbour on the machine
 *    moves the mean), executions per event, delivery (the rescue's updatedAt to arrival) p50/p99
 *    over every arrival counted;
 * 2. hostile tenant (issue 38, point 1): one client holds 20 `userUpdated` subscriptions, each a
 *    different document of 29 aliases of `bookings(first: 100)` on a user with 100 bookings (the largest
 *    document SUBSCRIPTIONS_MAX_COST lets through when that one is refused), and sends 12 PATCHes of the
 *    user; meanwhile another organisation reads its own user (GET /users/{id}) every 50 ms, from a
 *    worker thread (other-reads.ts: the tenant's results arriving here do not delay its timing). The
 *    storm starts once the subscriptions are held and the gateway is at rest again. Load
 *    shedding on (OVERLOAD_MAX_EVENT_LOOP_DELAY_MS=200): the other organisation's statuses and p99,
 *    against its baseline (200 reads in the same gateway at rest before the storm), and the tenant's own write statuses.
 */
import { Worker } from 'node:worker_threads';
import { percentile, flag, textFlag } from './args.ts';
import { commitOf, revisionOf } from './revision.ts';
import { testDatabase } from '../support/database.ts';
import { cpuSecondsOf } from './process-figures.ts';
import { clientOf, gateway, report, rescue, retrying, subscribeMany, succeeded, until, type Arrivals, type Gateway } from './subscription-gateways.ts';
import { subscriptionsHeld, untilHeld } from '../support/subscriptions-held.ts';
import { wsClient, type Watcher } from '../support/subscriptions.ts';
import type { Reads, ReadsTask } from './other-reads.ts';

const SUBSCRIBERS = Math.round(flag('subscribers', 1000, 2000));
const FAN_EVENTS = Math.round(flag('fan-events', 5, 20));
const IDENTITIES = 10;
const HOSTILE_SUBSCRIPTIONS = 20;
const HOSTILE_WRITES = 12;
/** The other organisation's reads before the storm: enough that their p99 is not their maximum. */
const BASELINE_READS = 200;
const BOOKINGS = 100;
const ALIASES = 29;
const SMI = '/shared-mobility-insights/v2/users';
/** The per-client connection cap: each identity holds SUBSCRIBERS / IDENTITIES WebSockets, the hostile tenant 20 (+ its trials). */
const CONNECTIONS_PER_CLIENT = Math.max(SUBSCRIBERS / IDENTITIES, HOSTILE_SUBSCRIPTIONS) + 5;
/** The rescue as its subscribers ask it, and how many times each identity asks it to warm up (fanOut). */
const RESCUE = 'query Track($reqId: ID!) { rescue(reqId: $reqId) { id status etaMinutes updatedAt } }';
const WARM_QUERIES = 300;
const NODE = 'nodes { bookingId vin userId deviceId status startTimestamp estimatedEndTimestamp actualEndTimestamp }';

/** The last commit before issue 38's work (73aca83 is its first). */
const PRE_ISSUE = textFlag('pre-issue', 'ee31568');

interface Mode { switches: Record<string, string>; rev?: string }
const MODES: Record<string, Mode> = {
  ...(PRE_ISSUE === 'none' ? {} : { 'pre-issue': { switches: {}, rev: PRE_ISSUE } }),
  'per-subscriber': { switches: { SUBSCRIPTIONS_FAN_OUT: 'per-subscriber', SUBSCRIPTIONS_MAX_COST: '20000', SUBSCRIPTIONS_EXECUTIONS_PER_MINUTE: '100000000' } },
  after: { switches: {} },
};

const metric = async (g: Gateway, name: string) => {
  const text = await (await fetch(`${g.server.base}/metrics`)).text();
  // NaN where the gateway has no such metric (the pre-issue revision counts no executions).
  return Number(new RegExp(`^${name} ([0-9.e+-]+)`, 'm').exec(text)?.[1] ?? NaN);
};
const ms = (values: number[]) => `p50 ${percentile(values, 50).toFixed(0)} ms, p99 ${percentile(values, 99).toFixed(0)} ms`;

async function fanOut(g: Gateway) {
  const tokens = await Promise.all(Array.from({ length: IDENTITIES }, () => clientOf(g, 'org-bench')));
  const reqId = await rescue(g);
  const aloneMs = await reportAlone(g, reqId);
  const subscribers: Arrivals[] = [];
  for (const token of tokens) subscribers.push(...await subscribeMany(g, reqId, SUBSCRIBERS / IDENTITIES, token));
  const event = async (i: number) => {
    await report(g, reqId, FAN_EVENTS + 1 + i);
    await until(() => subscribers.every((w) => w.at.length > i), `event ${i + 1} at ${subscribers.length} subscribers`, 180_000);
  };
  // A gateway that has run for a while is warm: it has served queries, and as many events as are
  // measured, none of them counted. Ten executions an event alone would leave much of their code
  // (Apollo Server's request, the plan, the subgraph's execution) unoptimised for many events.
  for (let i = 0; i < WARM_QUERIES; i++) await Promise.all(tokens.map((token) => gql(g, token, RESCUE, { reqId })));
  for (let i = 0; i < FAN_EVENTS; i++) await event(i);
  const executed = await metric(g, 'gateway_subscription_executions_total');
  await settled(g);
  const cpu: number[] = [];
  for (let i = FAN_EVENTS; i < 2 * FAN_EVENTS; i++) {
    const start = await cpuSecondsOf(g.server.child.pid!);
    await event(i);
    cpu.push((await cpuSecondsOf(g.server.child.pid!) - start) * 1000);
  }
  const executions = (await metric(g, 'gateway_subscription_executions_total') - executed) / FAN_EVENTS;
  const delays = subscribers.flatMap((w) => w.at.slice(FAN_EVENTS).map((at, k) => at - Date.parse(w.updatedAt[k + FAN_EVENTS]!)));
  await Promise.all(subscribers.map((w) => w.stop()));
  const cpuMs = cpu.reduce((sum, ms) => sum + ms, 0) / FAN_EVENTS;
  return { cpuMs, cpuMedianMs: percentile(cpu, 50), aloneMs, executions, delays };
}

/**
 * The gateway's CPU per report of the rescue while nobody watches it (the write, its outbox, relay,
 * history and webhook consumers): what every event costs before any subscriber, counted in the
 * fan-out's figure too. One to warm up, then `fan-events`, then 300 ms for the last one's relay and
 * consumers (not `settled`: its second at rest would count the gateway's timers, some 20 ms).
 */
async function reportAlone(g: Gateway, reqId: string) {
  await report(g, reqId, 0);
  return cpuMsPerEvent(g, async () => {
    for (let i = 1; i <= FAN_EVENTS; i++) await report(g, reqId, i);
    await new Promise((r) => setTimeout(r, 300));
  });
}

/** The gateway's CPU (every thread) while `events` runs FAN_EVENTS events, from rest, per event. */
async function cpuMsPerEvent(g: Gateway, events: () => Promise<void>) {
  await settled(g);
  const start = await cpuSecondsOf(g.server.child.pid!);
  await events();
  return (await cpuSecondsOf(g.server.child.pid!) - start) * 1000 / FAN_EVENTS;
}

const gql = async (g: Gateway, token: string, query: string, variables: Record<string, unknown> = {}) => {
  const res = await retrying(() => succeeded(g.request('POST', '/graphql', { token, body: { query, variables } })));
  const body = res.body as { data?: Record<string, { bookingId?: string }>; errors?: unknown };
  if (body.errors) throw new Error(`${query.slice(0, 40)}: ${JSON.stringify(body.errors)}`);
  return body.data!;
};

/** A user of the token's organisation with BOOKINGS ended bookings (10 at a time, a day apart). */
async function userWithBookings(g: Gateway, token: string, userId: string) {
  await gql(g, token, 'mutation($input: CreateUserInput) { createUser(input: $input) { userId } }', { input: { userId, dateOfBirth: '1985-04-12', homeZip: '60601' } });
  const vin = '1HGCM82633A004352';
  await gql(g, token, 'mutation($vin: VIN!) { createVehicle(vin: $vin, deviceId: "359881234567890") { vin } }', { vin });
  const day = Math.floor(Date.UTC(2026, 0, 1) / 1000);
  for (let i = 0; i < BOOKINGS; i += 10) {
    await Promise.all(Array.from({ length: 10 }, async (_, k) => {
      const s = day + (i + k) * 86_400;
      const started = await gql(g, token, 'mutation($input: BookingStartInput!) { startBooking(input: $input) { bookingId } }', { input: { vin, userId, startTimestamp: s, estimatedEndTimestamp: s + 3600 } });
      await gql(g, token, 'mutation($id: ID!, $end: EpochSeconds!) { endBooking(bookingId: $id, actualEndTimestamp: $end) { bookingId } }', { id: started.startBooking!.bookingId, end: s + 1800 });
    }));
  }
}

const hostileDocument = (n: number, aliases: number) => `subscription H${n}($id: ID!) { userUpdated(userId: $id) { ${
  Array.from({ length: aliases }, (_, i) => `a${i}: bookings(first: ${BOOKINGS}) { ${NODE} }`).join(' ')} } }`;

/** The other organisation reading its own user every 50 ms (other-reads.ts) from when it is `reading` until `stop`, and at least `min` times. */
function reads(g: Gateway, token: string, min: number) {
  const task: ReadsTask = { url: `${g.server.base}${SMI}/other-user`, token, min };
  const worker = new Worker(new URL('./other-reads.ts', import.meta.url), { workerData: task });
  const messages = new Promise<Reads>((resolve, reject) => { worker.on('message', (m: Reads | 'reading') => { if (m !== 'reading') resolve(m); }); worker.once('error', reject); });
  const reading = new Promise<void>((resolve) => { worker.once('message', () => resolve()); });
  return { reading, stop: () => { worker.postMessage('stop'); return messages.finally(() => worker.terminate()); } };
}

/**
 * Until the gateway is at rest (under 5% of a core over a second, at most a minute): what came
 * before (seeding, subscribing) relayed, recorded and delivered, so that it is not measured.
 */
async function settled(g: Gateway) {
  const until = Date.now() + 60_000;
  for (let before = await cpuSecondsOf(g.server.child.pid!); Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 1_000));
    const now = await cpuSecondsOf(g.server.child.pid!);
    if (now - before < 0.05) return;
    before = now;
  }
}

/** Events a result covers: 1, or its `coalesced`. */
const covered = (w: Watcher) => w.results.reduce((sum, r) => sum + ((r.extensions?.event as { coalesced?: number } | undefined)?.coalesced ?? 1), 0);

/** The largest hostile document the gateway lets start: the issue's, else as many aliases as SUBSCRIPTIONS_MAX_COST allows. */
async function largestAccepted(g: Gateway, token: string, userId: string) {
  const ws = wsClient(g.server.base, `Bearer ${token}`);
  try {
    for (let aliases = ALIASES; aliases > 0;) {
      const trial = ws.subscribe(hostileDocument(0, aliases), { id: userId });
      const refused = await Promise.race([trial.ended, new Promise((r) => setTimeout(() => r('running'), 2_000))]);
      trial.dispose();
      if (refused === 'running') return { aliases, note: aliases === ALIASES ? 'accepted' : '' };
      const { cost, maxCost } = (refused as { extensions: { cost: number; maxCost: number } }[])[0]!.extensions;
      const fits = Math.floor(aliases * maxCost / cost);
      if (aliases === ALIASES) console.log(`the issue's document (${ALIASES} aliases) refused: estimated cost ${cost} over ${maxCost}`);
      aliases = Math.min(aliases - 1, fits);
    }
    throw new Error('no hostile document starts');
  } finally {
    ws.dispose();
  }
}

async function hostile(g: Gateway) {
  const tenant = await clientOf(g, 'org-hostile');
  const other = await clientOf(g, 'org-other');
  await userWithBookings(g, tenant, 'victim');
  // A gateway that has run for a while has planned the PATCH: its first plan is not the storm's.
  await retrying(() => succeeded(g.request('PATCH', `${SMI}/victim`, { token: tenant, body: { homeZip: '60601' } })));
  await gql(g, other, 'mutation($input: CreateUserInput) { createUser(input: $input) { userId } }', { input: { userId: 'other-user', dateOfBirth: '1990-01-01', homeZip: '60606' } });
  while (await subscriptionsHeld(g.server.base) > 0) await new Promise((r) => setTimeout(r, 200));
  await settled(g);
  const baseline = await reads(g, other, BASELINE_READS).stop();
  const { aliases } = await largestAccepted(g, tenant, 'victim');
  const connections = Array.from({ length: HOSTILE_SUBSCRIPTIONS }, () => wsClient(g.server.base, `Bearer ${tenant}`));
  const watchers = connections.map((ws, n) => ws.subscribe(hostileDocument(n + 1, aliases), { id: 'victim' }));
  await untilHeld(g.server.base, HOSTILE_SUBSCRIPTIONS, 60_000);
  // Their setup (each document planned, the collections after) is not the storm's: measured from rest.
  await settled(g);
  const reading = reads(g, other, 20);
  await reading.reading;
  const writes: Record<number, number> = {};
  let committed = 0;
  let writing = true;
  const storm = (async () => {
    for (let i = 0; i < HOSTILE_WRITES; i++) {
      const res = await g.request('PATCH', `${SMI}/victim`, { token: tenant, body: { homeZip: String(60_602 + i) } });
      writes[res.status] = (writes[res.status] ?? 0) + 1;
      if (res.status < 300) committed += 1;
    }
    writing = false;
  })();
  const started = Date.now();
  while (writing || (!watchers.every((w) => covered(w) >= committed) && Date.now() - started < 120_000)) await new Promise((r) => setTimeout(r, 50));
  const during = await reading.stop();
  await storm;
  const results = watchers.reduce((sum, w) => sum + w.results.length, 0);
  for (const ws of connections) ws.dispose();
  return { aliases, baseline, during, writes, committed, results, seconds: (Date.now() - started) / 1000 };
}

const statusText = (statuses: Record<number, number>) => Object.entries(statuses).map(([s, n]) => `${n}x${s}`).join(' ');

/** Where the scenarios run: the server of each mode's database (testDatabase: '' is in-memory PGlite). */
const STORES = { PGlite: '', ...(process.env.DATABASE_URL ? { PostgreSQL: process.env.DATABASE_URL } : {}) };

type Figures = { fan: Awaited<ReturnType<typeof fanOut>>; host: Awaited<ReturnType<typeof hostile>> };

/** Both scenarios in one mode, on a gateway and a database of their own. */
async function figuresOf(env: Record<string, string>, mode: Mode, base: string): Promise<Figures> {
  const revision = mode.rev ? await revisionOf(mode.rev) : undefined;
  const database = await testDatabase(base, 'bench_fan');
  try {
    const g = await gateway({
      ...env, ...mode.switches, ...database.env, OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '200',
      SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT: String(CONNECTIONS_PER_CLIENT), SUBSCRIPTIONS_MAX_CONNECTIONS_PER_PROCESS: String(SUBSCRIBERS + 100),
    }, revision?.root);
    try {
      return { fan: await fanOut(g), host: await hostile(g) };
    } finally {
      await g.server.stop();
    }
  } finally {
    await database.drop();
    await revision?.remove();
  }
}

/** Runs both scenarios before and after on each store; `say` prints a line of the summary, the stores side by side. */
export async function fanOutFigures(env: Record<string, string>, say: (line: string) => void) {
  const figures: Record<string, Record<string, Figures>> = {};
  for (const [store, base] of Object.entries(STORES)) {
    for (const [name, mode] of Object.entries(MODES)) (figures[name] ??= {})[store] = await figuresOf(env, mode, base);
  }
  if (MODES['pre-issue']) say(`pre-issue: commit ${(await commitOf(PRE_ISSUE)).slice(0, 12)}, with this checkout's node_modules`);
  for (const [mode, stores] of Object.entries(figures)) {
    for (const [store, { fan }] of Object.entries(stores)) {
      say(`fan-out ${mode} (${store}): ${SUBSCRIBERS} subscribers of one rescue (${IDENTITIES} identities), ${FAN_EVENTS} events after as many to warm up: gateway CPU per event ${fan.cpuMs.toFixed(0)} ms (median ${fan.cpuMedianMs.toFixed(0)} ms; the report alone, nobody watching: ${fan.aloneMs.toFixed(0)} ms), ${Number.isNaN(fan.executions) ? 'executions not counted' : `${fan.executions} executions per event`}, delivery ${ms(fan.delays)}`);
    }
    for (const [store, { host }] of Object.entries(stores)) {
      say(`hostile ${mode} (${store}): ${HOSTILE_SUBSCRIPTIONS} subscriptions of ${host.aliases} aliases x bookings(first: ${BOOKINGS}), ${HOSTILE_WRITES} PATCHes (${statusText(host.writes)}), ${host.results} results in ${host.seconds.toFixed(1)} s; other organisation: baseline ${ms(host.baseline.times)} (${statusText(host.baseline.statuses)}), during ${ms(host.during.times)} (${statusText(host.during.statuses)})`);
    }
  }
  for (const store of Object.keys(STORES)) {
    const after = figures.after![store]!;
    const lower = Object.keys(MODES).filter((m) => m !== 'after').map((m) => {
      const { cpuMs, cpuMedianMs } = figures[m]![store]!.fan;
      return `${(cpuMs / after.fan.cpuMs).toFixed(1)}x lower than ${m} (medians ${(cpuMedianMs / after.fan.cpuMedianMs).toFixed(1)}x)`;
    });
    const [baseline, during] = [percentile(after.host.baseline.times, 99), percentile(after.host.during.times, 99)];
    say(`${store}: fan-out CPU per event after ${lower.join(', ')} (target >= 20x), delivery p99 after ${percentile(after.fan.delays, 99).toFixed(0)} ms (target < 1000 ms); hostile after: other organisation p99 ${(during / baseline).toFixed(1)}x its baseline (target <= 2x)`);
  }
}
