/**
 * `npm run bench -- defer` runs defer.ts (time to the first part, @defer against none) and nothing else.
 * `npm run bench [-- <scenario>...] [--duration=3] [--rounds=2] [--connections=8] [--warmup=1] [--variants=a,b]`
 *
 * Starts the servers (server.ts) in a child process on loopback, seeds data through the API, then
 * for each scenario measures every variant with autocannon for a bounded time, the variants in turn
 * for a few rounds (pooled), so that the machine's changing load touches them alike.
 * Prints a table and the ratios the issue sets targets for, then (scenario `start`, included by
 * default) the first start, restart and idle RSS of `npm start` (start.ts); with BENCH_PROFILE the
 * CPU per request by layer (layers.ts). Writes JSON to test/bench/results/.
 * Environment: BENCH_DURATION, BENCH_ROUNDS, BENCH_CONNECTIONS, BENCH_WARMUP, BENCH_PROFILE (a folder for a
 * CPU profile of the server per round, and index.json listing them), DATABASE_URL
 * (a fresh database is created on that server and dropped afterwards; PGlite in memory without it).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon, { type Client } from 'autocannon';
import { decodeJwt, exportPKCS8, generateKeyPair, importPKCS8 } from 'jose';
import { SERVER_ENV, type MixedSeed, type ServerMessage, type ServerReply, type ServerStats, type Targets } from './protocol.ts';
import { graphql, publishBenchDocuments, scenarios, seed, skipReason, token, type Measurement, type Scenario, type ScenarioContext, type Variant } from './scenarios.ts';
import { SupergraphInfo } from './schema.ts';
import { breakdown, markdown, type ProfileEntry } from './layers.ts';
import { describeStart, measureStart, type StartResult } from './start.ts';
import { verify } from './verify.ts';
import { benchEndUser } from './user-token.ts';
import { mixedRiskWarmUp } from './mixed.ts';
import { machineParallelism, measureWorkers, type WorkersResult } from './workers.ts';
import { generateHopKey, INTERNAL_HOP_HEADER, signHop } from '../../subgraphs/platform/internal-hop.ts';
import { signInternalToken } from '../../subgraphs/platform/auth/internal-token.ts';
import { JWT_ALG } from '../../subgraphs/platform/auth/keys.ts';
import { scopesOf } from '../../subgraphs/platform/auth/tokens.ts';

// Shared with the server process (it inherits the environment): the `direct` variant signs its requests
// and makes its internal tokens as the gateway does.
const hopKey = process.env.INTERNAL_HOP_KEY ??= generateHopKey();
const internalKey = await importPKCS8(process.env.INTERNAL_TOKEN_PRIVATE_KEY
  ??= await exportPKCS8((await generateKeyPair(JWT_ALG, { extractable: true })).privateKey), JWT_ALG);

/**
 * For the `direct` variant: the internal token the gateway would send the owning subgraph for the bench
 * client (a fresh one per use: it lives 60 s).
 */
async function directAuthorization(m: Measurement, ctx: ScenarioContext): Promise<string | undefined> {
  const subgraph = Object.entries(ctx.targets.direct).find(([, url]) => url === m.url)?.[0];
  if (m.variant !== 'direct' || !m.auth || !subgraph) return undefined;
  const { sub, org, scope, iss } = decodeJwt(ctx.token) as { sub: string; org: string; scope: string; iss: string };
  return `Bearer ${await signInternalToken({ clientId: sub, orgId: org, scopes: scopesOf(scope) }, subgraph, internalKey, { issuer: iss })}`;
}

interface Options { duration: number; rounds: number; connections: number; warmup: number; only: string[]; variants: string[]; collapse: boolean }

function parseOptions(argv: string[]): Options {
  const flag = (name: string, fallback: number) => {
    const arg = argv.find((a) => a.startsWith(`--${name}=`));
    const value = Number(arg ? arg.split('=')[1] : process.env[`BENCH_${name.toUpperCase()}`] ?? fallback);
    if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
    return value;
  };
  const only = argv.filter((a) => !a.startsWith('--'));
  // --variants=a,b (or BENCH_VARIANTS): only those variants of each scenario, e.g. to iterate on one.
  const variants = (argv.find((a) => a.startsWith('--variants='))?.split('=')[1] ?? process.env.BENCH_VARIANTS ?? '').split(',').filter(Boolean);
  // --collapse=off (or BENCH_COLLAPSE=off): our gateways without request collapsing, for per-request costs on the repeated request.
  const collapse = (argv.find((a) => a.startsWith('--collapse='))?.split('=')[1] ?? process.env.BENCH_COLLAPSE ?? 'on') !== 'off';
  const unknown = only.filter((name) => name !== 'start' && name !== 'workers' && !scenarios.some((s) => s.name === name));
  if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}; known: ${scenarios.map((s) => s.name).join(', ')}`);
  // Bounded: at most 30 s per measurement and 64 connections, whatever is asked.
  return { duration: Math.min(flag('duration', 3), 30), rounds: Math.min(Math.round(flag('rounds', 2)), 10), connections: Math.min(Math.round(flag('connections', 8)), 64), warmup: Math.min(flag('warmup', 1), 10), only, variants, collapse };
}

export interface MeasurementResult {
  scenario: string;
  variant: Variant;
  status: 'measured' | 'skipped' | 'failed';
  reason?: string;
  /** What the answer was (e.g. the union member a coverage score returned). */
  note?: string;
  requestsPerSecond?: number;
  latencyMs?: { p50: number; p95: number; p99: number; max: number };
  requests?: number;
  /** Socket errors + timeouts + non-2xx + responses carrying GraphQL errors. */
  errors?: number;
  sqlPerRequest?: number;
  sqlBySubgraph?: Record<string, number>;
  /** Server-process CPU time per request, microseconds (less sensitive to a busy machine than req/s). */
  cpuMicrosPerRequest?: number;
  eventLoopUtilization?: number;
}

/* ---------------------------------------- server process ---------------------------------------- */

class Servers {
  private nextId = 1;
  private readonly waiting = new Map<number, (reply: ServerReply) => void>();
  private readonly child: ChildProcess;
  readonly ready: Promise<Extract<ServerReply, { type: 'ready' }>>;

  constructor(collapse: boolean) {
    this.child = fork(fileURLToPath(new URL('./server.ts', import.meta.url)), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, ...SERVER_ENV, REQUEST_COLLAPSING: String(collapse) },
    });
    this.ready = new Promise((resolve, reject) => {
      this.child.once('exit', (code) => reject(new Error(`benchmark server exited (code ${code}) before it was ready`)));
      this.child.on('message', (message: ServerReply) => {
        if (message.type === 'ready') resolve(message);
        else this.waiting.get(message.id)?.(message);
      });
    });
  }

  private ask(message: DistributiveOmit<ServerMessage, 'id'>): Promise<ServerReply> {
    const id = this.nextId++;
    return new Promise((resolve) => { this.waiting.set(id, resolve); this.child.send({ ...message, id } as ServerMessage); });
  }

  async stats(type: 'reset' | 'read', label?: string): Promise<ServerStats> {
    const reply = await this.ask({ type, label });
    if (reply.type !== 'stats') throw new Error('unexpected reply');
    return reply.stats;
  }

  async seedMixed(clients: number): Promise<MixedSeed> {
    const reply = await this.ask({ type: 'seed-mixed', clients });
    if (reply.type === 'failed') throw new Error(reply.problem);
    if (reply.type !== 'seeded') throw new Error('unexpected reply');
    return reply.seed;
  }

  async close() {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    await Promise.race([this.ask({ type: 'close' }), new Promise((resolve) => setTimeout(resolve, 15_000))]);
    this.child.disconnect();
    const timer = setTimeout(() => this.child.kill(), 5_000);
    await exited;
    clearTimeout(timer);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** The `mixed` scenario's data and one token per connection, each of its own API client. */
async function seedMixed(servers: Servers, ctx: ScenarioContext, gateway: string, connections: number) {
  try {
    const started = performance.now();
    const { users, bookings, clients } = await servers.seedMixed(connections);
    ctx.tokens = await Promise.all(clients.map((client) => token(gateway, client)));
    ctx.seed.mixed = { users, bookings };
    console.log(`  mixed: ${users} users, ${bookings} bookings and ${clients.length} API clients seeded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await warmMixedRisk(ctx, gateway);
  } catch (error) {
    ctx.seed.problems.mixed = (error as Error).message;
  }
}

/** Every `mixed` area asked once through our gateway, so that no variant pays the shared cache's first evaluations (mixedRiskWarmUp). */
async function warmMixedRisk(ctx: ScenarioContext, gateway: string) {
  if (!ctx.subgraphs.includes('risk')) return;
  const started = performance.now();
  const requests = mixedRiskWarmUp(ctx.schema);
  let failed = 0;
  for (let i = 0; i < requests.length; i += 4) {
    await Promise.all(requests.slice(i, i + 4).map(({ query, variables }) => graphql(`${gateway}/graphql`, query, variables, ctx.token).catch(() => { failed += 1; })));
  }
  console.log(`  mixed: ${requests.length} Risk Index areas asked once before measuring (${((performance.now() - started) / 1000).toFixed(1)} s${failed ? `, ${failed} failed` : ''})`);
}

/* ---------------------------------------- measuring ---------------------------------------- */

const percentile = (sorted: Float64Array, p: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] : 0);
const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

function load(m: Measurement, headers: Record<string, string>, duration: number, connections: number, record?: (ms: number) => void, tokens: string[] = []) {
  let graphqlErrors = 0;
  // A 200 can still carry GraphQL errors: count them as errors.
  const onResponse = (status: number, body: string) => { if (status < 300 && body.includes('"errors"')) graphqlErrors += 1; };
  let connection = 0;
  const instance = autocannon({
    url: m.url, connections, duration, timeout: 10,
    requests: [{ method: m.method, headers, body: m.body, onResponse }],
    // A workload (scenario `mixed`): each connection its own token and its own sequence of requests.
    ...(m.mix ? {
      setupClient: (client: Client) => {
        const n = connection++;
        const next = m.mix!.connection(n);
        const auth = { ...headers, authorization: `Bearer ${tokens[n % tokens.length]}` };
        client.setRequests([{
          onResponse,
          setupRequest: (request) => {
            const { method, path, body } = next();
            return { ...request, method, path, body, headers: body ? { ...auth, 'content-type': 'application/json' } : auth };
          },
        }]);
      },
    } : {}),
  });
  if (record) instance.on('response', (_client: unknown, _status: number, _bytes: number, ms: number) => record(ms));
  return Promise.resolve(instance).then((result) => ({ result, graphqlErrors }));
}

const headersFor = (m: Measurement, token: string, direct?: string): Record<string, string> => ({
  ...(m.body ? { 'content-type': 'application/json' } : {}), ...(m.auth ? { authorization: direct ?? `Bearer ${m.token ?? token}` } : {}),
  ...(m.variant === 'direct' ? { [INTERNAL_HOP_HEADER]: signHop(hopKey, { method: m.method, target: new URL(m.url).pathname, body: m.body }) } : {}),
});

/** The raw figures of one round of one measurement; rounds are pooled by `summarise`. */
interface Sample { seconds: number; requests: number; errors: number; times: number[]; statements: Record<string, number>; cpuMicros: number; elu: number }

/** BENCH_PROFILE: which profile holds which measurement, and its request count (read by layers.ts). */
const profileIndex: ProfileEntry[] = [];

async function sample(servers: Servers, scenario: Scenario, m: Measurement, ctx: ScenarioContext, options: Options, round: number): Promise<Sample> {
  const headers = m.mix ? {} : headersFor(m, ctx.token, await directAuthorization(m, ctx));
  if (round === 0) await load(m, headers, options.warmup, options.connections, undefined, ctx.tokens);
  const times: number[] = [];
  await servers.stats('reset', `${scenario.name}-${m.variant}-${round + 1}`);
  const { result, graphqlErrors } = await load(m, headers, options.duration, options.connections, (ms) => times.push(ms), ctx.tokens);
  const stats = await servers.stats('read');
  if (stats.profile && process.env.BENCH_PROFILE) {
    profileIndex.push({ file: stats.profile, scenario: scenario.name, variant: m.variant, requests: result.requests.total, cpuMicros: stats.cpuMicros });
    await writeFile(join(process.env.BENCH_PROFILE, 'index.json'), `${JSON.stringify(profileIndex, null, 2)}\n`);
  }
  return {
    seconds: result.duration, requests: result.requests.total, times, statements: stats.statements,
    errors: result.errors + result.timeouts + result.non2xx + graphqlErrors, cpuMicros: stats.cpuMicros, elu: stats.eventLoopUtilization,
  };
}

function summarise(scenario: Scenario, m: Measurement, samples: Sample[]): MeasurementResult {
  const sum = (f: (s: Sample) => number) => samples.reduce((a, s) => a + f(s), 0);
  const requests = sum((s) => s.requests);
  const sorted = Float64Array.from(samples.flatMap((s) => s.times)).sort();
  const bySubgraph: Record<string, number> = {};
  for (const s of samples) for (const [name, n] of Object.entries(s.statements)) bySubgraph[name] = (bySubgraph[name] ?? 0) + n;
  const statements = Object.values(bySubgraph).reduce((a, b) => a + b, 0);
  const perRequest = (n: number, digits = 2) => (requests ? round(n / requests, digits) : 0);
  return {
    scenario: scenario.name, variant: m.variant, status: 'measured',
    requestsPerSecond: round(requests / sum((s) => s.seconds), 0),
    latencyMs: { p50: round(percentile(sorted, 50)), p95: round(percentile(sorted, 95)), p99: round(percentile(sorted, 99)), max: round(sorted[sorted.length - 1] ?? 0) },
    requests,
    errors: sum((s) => s.errors),
    sqlPerRequest: perRequest(statements),
    sqlBySubgraph: Object.fromEntries(Object.entries(bySubgraph).filter(([, n]) => n > 0).map(([name, n]) => [name, perRequest(n)])),
    cpuMicrosPerRequest: perRequest(sum((s) => s.cpuMicros), 0),
    eventLoopUtilization: round(sum((s) => s.elu) / samples.length),
  };
}

/**
 * Every variant of a scenario, `rounds` times in turn (a, b, c, a, b, c, ...), so that a change in
 * the machine's load during the run touches all variants alike; rounds are pooled.
 */
async function measureScenario(servers: Servers, scenario: Scenario, ctx: ScenarioContext, options: Options): Promise<MeasurementResult[]> {
  const measurements = scenario.measurements(ctx).filter((m) => !options.variants.length || options.variants.includes(m.variant));
  const checks = await Promise.all(measurements.map(async (m) => {
    const direct = await directAuthorization(m, ctx);
    return verify(m, (request) => headersFor(request, ctx.token, direct));
  }));
  const samples: Sample[][] = measurements.map(() => []);
  for (let round = 0; round < options.rounds; round++) {
    for (const [i, m] of measurements.entries()) {
      if (!checks[i].problem) samples[i].push(await sample(servers, scenario, m, ctx, options, round));
    }
  }
  return measurements.map((m, i) => {
    const { problem, note } = checks[i];
    const result: MeasurementResult = problem
      ? { scenario: scenario.name, variant: m.variant, status: 'failed', reason: problem }
      : { ...summarise(scenario, m, samples[i]), ...(note ? { note } : {}) };
    console.log(`  ${scenario.name} / ${m.variant}: ${result.status === 'measured' ? `${result.requestsPerSecond} req/s, p99 ${result.latencyMs!.p99} ms, ${result.sqlPerRequest} sql/req, ${result.cpuMicrosPerRequest} µs cpu/req` : `${result.status}: ${result.reason}`}${result.note ? ` (${result.note})` : ''}`);
    return result;
  });
}

/* ---------------------------------------- reporting ---------------------------------------- */

/** A ratio of req/s (target: at least), or with `ceiling` a CPU time per request in µs (target: at most). */
interface RatioResult { scenario: string; label: string; value?: number; target?: number; met?: boolean; cpuRatio?: number; ceiling?: boolean }

function ratios(scenario: Scenario, results: MeasurementResult[]): RatioResult[] {
  const rps = (v: Variant) => results.find((r) => r.scenario === scenario.name && r.variant === v && r.status === 'measured');
  const cpu = (scenario.cpuTargets ?? []).map(({ variant, label, micros }): RatioResult => {
    const value = rps(variant)?.cpuMicrosPerRequest;
    return { scenario: scenario.name, label: `cpu µs/req, ${label}`, value, target: micros, met: value === undefined ? undefined : value <= micros, ceiling: true };
  });
  return [...scenario.ratios.map((ratio): RatioResult => {
    const a = rps(ratio.numerator);
    const b = rps(ratio.denominator);
    if (!a?.requestsPerSecond || !b?.requestsPerSecond) return { scenario: scenario.name, label: ratio.label, target: ratio.target };
    const value = round(a.requestsPerSecond / b.requestsPerSecond);
    // CPU per request of the denominator over the numerator's: the same ratio, less noisy on a shared machine.
    const cpuRatio = a.cpuMicrosPerRequest && b.cpuMicrosPerRequest ? round(b.cpuMicrosPerRequest / a.cpuMicrosPerRequest) : undefined;
    return { scenario: scenario.name, label: ratio.label, value, target: ratio.target, met: ratio.target === undefined ? undefined : value >= ratio.target, cpuRatio };
  }), ...cpu];
}

function table(rows: string[][]) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r, n) => {
    const line = r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
    return n === 0 ? `${line}\n${widths.map((w) => '-'.repeat(w)).join('  ')}` : line;
  }).join('\n');
}

function print(results: MeasurementResult[], ratioResults: RatioResult[]) {
  const rows = [['scenario', 'variant', 'req/s', 'p50 ms', 'p95 ms', 'p99 ms', 'errors', 'sql/req', 'cpu µs/req', 'loop busy']];
  for (const r of results) {
    if (r.status !== 'measured') { rows.push([r.scenario, r.variant, `${r.status}: ${r.reason}`]); continue; }
    rows.push([r.scenario, r.variant, String(r.requestsPerSecond), String(r.latencyMs!.p50), String(r.latencyMs!.p95), String(r.latencyMs!.p99),
      String(r.errors), String(r.sqlPerRequest), String(r.cpuMicrosPerRequest), `${Math.round(r.eventLoopUtilization! * 100)}%`]);
  }
  console.log(`\n${table(rows.map((r) => (r.length === 3 ? [r[0], r[1], r[2], '', '', '', '', '', '', ''] : r))).replace(/ +$/gm, '')}`);
  if (!ratioResults.length) return;
  const ratioRows = [['scenario', 'ratio (req/s)', 'value', 'target', 'met', 'cpu ratio']];
  for (const r of ratioResults) {
    const unit = r.ceiling ? ' µs' : 'x';
    ratioRows.push([r.scenario, r.label, r.value === undefined ? 'n/a' : `${r.value}${unit}`, r.target === undefined ? '' : `${r.ceiling ? '<=' : '>='} ${r.target}${unit}`,
      r.met === undefined ? '' : r.met ? 'yes' : 'NO', r.cpuRatio === undefined ? '' : `${r.cpuRatio}x`]);
  }
  console.log(`\n${table(ratioRows)}`);
}

/* ---------------------------------------- main ---------------------------------------- */

async function runScenarios(selected: Scenario[], options: Options, results: MeasurementResult[]) {
  const servers = new Servers(options.collapse);
  const stop = () => { void servers.close().finally(() => process.exit(130)); };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  let ratioResults: RatioResult[] = [];
  let info: Awaited<Servers['ready']>;
  let endUser: Awaited<ReturnType<typeof benchEndUser>> | undefined;
  try {
    info = await servers.ready;
    const bearer = await token(info.targets.gateway, info.client);
    const base = { targets: info.targets as Targets, subgraphs: info.subgraphs, schema: new SupergraphInfo(), token: bearer };
    console.log(`servers up (${info.database}); subgraphs: ${info.subgraphs.join(', ')}; seeding through the gateway...`);
    for (const [name, problem] of Object.entries(info.broken)) console.log(`  subgraph ${name} left out, its schema does not build: ${problem}`);
    const ctx: ScenarioContext = { ...base, seed: await seed(base) };
    if (selected.some((s) => s.name === 'user-token')) {
      endUser = await benchEndUser(info.targets.gateway, info.client);
      ctx.userToken = endUser.token;
    }
    if (selected.some((s) => s.name === 'mixed')) await seedMixed(servers, ctx, info.targets.gateway, options.connections);
    if (selected.some((s) => s.name === 'documents')) {
      ctx.seed.documentId = await publishBenchDocuments(info.targets.gatewayInprocess, info.client).catch((error: Error) => { ctx.seed.problems.documents = error.message; return undefined; });
    }
    for (const [area, problem] of Object.entries(ctx.seed.problems)) console.log(`  seeding ${area} failed: ${problem}`);
    console.log(`measuring ${options.rounds} x ${options.duration} s per variant, variants in turn (after ${options.warmup} s warm-up), ${options.connections} connections, request collapsing ${options.collapse ? 'on' : 'off (--collapse=off)'}`);
    for (const scenario of selected) {
      const reason = skipReason(scenario, ctx);
      if (reason) { results.push({ scenario: scenario.name, variant: 'gateway', status: 'skipped', reason }); console.log(`  ${scenario.name}: skipped (${reason})`); continue; }
      results.push(...await measureScenario(servers, scenario, ctx, options));
      ratioResults = [...ratioResults, ...ratios(scenario, results)];
    }
  } finally {
    await servers.close();
    await endUser?.close();
  }
  return { database: info.database, ratioResults };
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const selected = scenarios.filter((s) => !options.only.length || options.only.includes(s.name));
  const measureStartTime = !options.only.length || options.only.includes('start');
  // WORKERS=2 against 1 (PostgreSQL): in every run on PostgreSQL, or when asked by name.
  const measureWorkerCounts = options.only.includes('workers') || (!options.only.length && Boolean(process.env.DATABASE_URL));
  if (process.env.BENCH_PROFILE) await mkdir(process.env.BENCH_PROFILE, { recursive: true });
  const results: MeasurementResult[] = [];
  let ratioResults: RatioResult[] = [];
  let database = 'none';
  if (selected.length) ({ database, ratioResults } = await runScenarios(selected, options, results));
  print(results, ratioResults);
  const layers = process.env.BENCH_PROFILE && profileIndex.length ? await breakdown(process.env.BENCH_PROFILE) : undefined;
  if (layers) console.log(`\nCPU per request by layer, from the profiles in ${process.env.BENCH_PROFILE} (µs):\n${markdown(layers)}`);
  let start: StartResult | undefined;
  if (measureStartTime) {
    // After the servers closed: the start is measured on a machine the benchmark no longer loads.
    start = await measureStart().catch((error: Error) => { console.log(`\nstart: failed: ${error.message}`); return undefined; });
    if (start) console.log(`\nnpm start on an empty DATA_DIR (embedded default, PGlite): ${describeStart(start)}`);
  }
  let workers: { results: WorkersResult[]; ratio: number; parallelism: number; ceiling: number } | undefined;
  if (measureWorkerCounts) {
    const measured = await measureWorkers(options).catch((error: Error) => { console.log(`\nworkers: failed: ${error.message}`); return undefined; });
    if (measured) {
      const [one, two] = measured;
      const ratio = round(two.requestsPerSecond / one.requestsPerSecond);
      // What WORKERS=2 could reach at best here: the cores the machine really gives two busy threads,
      // spent on the whole of a request (server, PostgreSQL, load generator) at WORKERS=1's cost,
      // against WORKERS=1, whose one server process is the limit.
      const parallelism = await machineParallelism();
      const cost = one.cpuMicrosPerRequest;
      const ceiling = round((parallelism * cost.server) / (cost.server + cost.postgres + cost.loadGenerator));
      console.log(`\nnpm start on PostgreSQL, REST user lookup: WORKERS=1 ${one.requestsPerSecond} req/s, WORKERS=2 ${two.requestsPerSecond} req/s (errors ${one.errors}/${two.errors}): ` +
        `${ratio}x (target >= 1.6x) ${ratio >= 1.6 ? 'met' : 'NOT met'}; the load generator and PostgreSQL share the machine. ` +
        `Two CPU-bound threads at once run ${parallelism}x one thread here, so the ceiling for WORKERS=2 with WORKERS=1's cost per request is ${ceiling}x:`);
      workers = { results: measured, ratio, parallelism, ceiling };
      console.table(measured.map((w) => ({
        WORKERS: w.workers, 'req/s': w.requestsPerSecond, 'server cpu µs/req': w.cpuMicrosPerRequest.server, 'postgres cpu µs/req': w.cpuMicrosPerRequest.postgres,
        'load generator cpu µs/req': w.cpuMicrosPerRequest.loadGenerator, 'cores busy (of 2)': w.coresBusy,
      })));
    }
  }
  const report = {
    at: new Date().toISOString(),
    machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, load: os.loadavg().map((l) => round(l)) },
    database,
    options: { duration: options.duration, rounds: options.rounds, connections: options.connections, warmup: options.warmup, collapse: options.collapse },
    scenarios: selected.map((s) => ({ name: s.name, title: s.title })),
    results, ratios: ratioResults, ...(start ? { start } : {}), ...(workers ? { workers } : {}), ...(layers ? { layers } : {}),
  };
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  await mkdir(dir, { recursive: true });
  const file = `${dir}bench-${report.at.replace(/[:.]/g, '-')}.json`;
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  await writeFile(`${dir}latest.json`, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\nresults written to ${file}\nFigures are noisy on a shared machine; compare ratios within one run, and the cpu ratio column.`);
}

if (process.argv.slice(2).includes('defer')) await import('./defer.ts');
else main().catch((error) => { console.error(error); process.exitCode = 1; });
