/**
 * The benchmark's servers, in a process of their own so the load generator (run.ts) does not share
 * their event loop: the embedded stack (subgraphs on loopback + our gateway over HTTP), a second
 * gateway on the same subgraphs executing them in-process, a stock Apollo Gateway, Hive Gateway
 * (with its defaults and with its in-flight de-duplication off, hive.ts), and the bare
 * Fastify + driver server of the REST user lookup (bare.ts); both our gateways collapse identical
 * in-flight reads unless REQUEST_COLLAPSING=false (run.ts --collapse=off). Talks to
 * run.ts over IPC: `ready` with the addresses, then `reset`/`read` of SQL and CPU counters, and
 * `seed-mixed` (the `mixed` scenario's data and API clients, by batched SQL).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { loadConfig, subgraphUrlVariable } from '../../subgraphs/platform/config.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { buildSchema } from '../../subgraphs/platform/subgraph.ts';
import { buildStack } from '../../gateway/stack.ts';
import { buildGateway } from '../../gateway/app.ts';
import { testDatabase } from '../support/database.ts';
import { startStockGateway } from './stock.ts';
import { startHiveGateway } from './hive.ts';
import { internalAuthorizer } from './internal-authorization.ts';
import { startBareServer } from './bare.ts';
import { seedMixed } from './mixed.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { parseScopes } from '../../gateway/auth/clients.ts';
import { SCOPES } from '../../subgraphs/platform/auth/tokens.ts';
import type { BenchClient, ServerMessage, ServerReply, ServerStats } from './protocol.ts';

export const BENCH_CLIENT: BenchClient = { id: 'bench-client', secret: 'bench-secret-0123456789abcdef', org: 'bench-org' };

const dataDir = await mkdtemp(join(tmpdir(), 'frg-bench-'));
const database = await testDatabase();
const env = {
  ...process.env,
  NODE_ENV: 'production', LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', DATA_DIR: dataDir,
  BOOTSTRAP_CLIENT_ID: BENCH_CLIENT.id, BOOTSTRAP_CLIENT_SECRET: BENCH_CLIENT.secret, BOOTSTRAP_ORG: BENCH_CLIENT.org,
  // The load comes from one client: the per-client rate limit would otherwise answer 429.
  RATE_LIMIT_PER_MINUTE: '1000000000', TOKEN_RATE_LIMIT_PER_MINUTE: '1000',
  // Scenario user-token: the end users' issuer (test/support/oidc-issuer.ts) listens on loopback.
  OIDC_ALLOW_LOOPBACK: 'true',
  // Throughput is measured at saturation, which load shedding would refuse (bench:exposure measures shedding).
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: '0',
  // Every connection may be in a Risk Index evaluation at once (scenarios risk and mixed): the bound
  // would answer the surplus with a cheap 503, which the stock gateway (no such bound) does not.
  RISK_MAX_IN_FLIGHT: '64',
  // The mixed seed's single statements (30,000 bookings in one) outlast the default 15 s on a loaded machine.
  DB_QUERY_TIMEOUT_MS: process.env.DB_QUERY_TIMEOUT_MS ?? '120000',
  SUBGRAPH_TRANSPORT: 'http',
  // Our gateways collapse identical in-flight reads unless the runner says otherwise (--collapse=off).
  REQUEST_COLLAPSING: process.env.REQUEST_COLLAPSING ?? 'true',
  // run.ts signs the `direct` requests once per measurement (INTERNAL_HOP_KEY comes from it).
  INTERNAL_HOP_MAX_SKEW_SECONDS: '600',
  DATABASE_URL: undefined,
  ...database.env,
};
// A subgraph whose schema does not build (work in progress) is left out, and its scenarios skipped.
const broken: Record<string, string> = {};
for (const [name, definition] of Object.entries(subgraphDefinitions)) {
  try {
    buildSchema(definition);
  } catch (error) {
    broken[name] = (error as Error).message.split('\n')[0];
    Object.assign(env, { [subgraphUrlVariable(name)]: 'http://127.0.0.1:9/graphql' });
  }
}
const config = loadConfig(env);
const stack = await buildStack(config, env);
const gatewayHttp = await stack.gateway.app.listen({ host: '127.0.0.1', port: 0 });
const inprocess = await buildGateway({
  config: { ...config, SUBGRAPH_TRANSPORT: 'inprocess' }, db: stack.db, revocation: stack.revocation, subgraphUrls: stack.subgraphUrls, localSubgraphs: stack.subgraphs,
  // As the stack's own gateway: Risk Index ETags of the data version, the answer cache in /metrics.
  publicAnswers: stack.subgraphs.find((s) => s.answers)?.answers, bus: stack.bus,
});
const gatewayInprocess = await inprocess.app.listen({ host: '127.0.0.1', port: 0 });
const authorize = await internalAuthorizer(config);
const stock = await startStockGateway(stack.subgraphUrls, authorize, config.INTERNAL_HOP_KEY);
const hive = await startHiveGateway(stack.subgraphUrls, authorize, config.INTERNAL_HOP_KEY!);
const hiveNodedup = await startHiveGateway(stack.subgraphUrls, authorize, config.INTERNAL_HOP_KEY!, { deduplicate: false });
const scoring = stack.subgraphs.find((s) => s.name === 'scoring');
const bare = scoring ? await startBareServer(scoring.db, BENCH_CLIENT.org, config.DATABASE_URL) : undefined;

// BENCH_PROFILE=<folder>: a V8 CPU profile of the server process per measurement, for finding hot spots.
const profileDir = process.env.BENCH_PROFILE;
const profiler = profileDir ? new Session() : undefined;
if (profiler) { profiler.connect(); await profiler.post('Profiler.enable'); }
let profileLabel = 'bench';

let cpu = process.cpuUsage();
let elu = performance.eventLoopUtilization();

function stats(): ServerStats {
  const used = process.cpuUsage(cpu);
  return {
    statements: { ...Object.fromEntries(stack.subgraphs.map((s) => [s.name, s.db.statements.count])), ...(bare ? { bare: bare.statements.count } : {}) },
    cpuMicros: used.user + used.system,
    eventLoopUtilization: performance.eventLoopUtilization(elu).utilization,
  };
}

let closing: Promise<void> | undefined;
function close() {
  closing ??= (async () => {
    await stock.stop().catch(() => undefined);
    await hive.stop().catch(() => undefined);
    await hiveNodedup.stop().catch(() => undefined);
    await bare?.stop().catch(() => undefined);
    await inprocess.close().catch(() => undefined);
    await stack.close().catch(() => undefined);
    await database.drop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
  })();
  return closing;
}

const reply = (message: ServerReply) => process.send?.(message);

process.on('message', async (message: ServerMessage) => {
  if (message.type === 'reset') {
    profileLabel = message.label ?? 'bench';
    await profiler?.post('Profiler.start');
    for (const subgraph of stack.subgraphs) subgraph.db.statements.reset();
    bare?.statements.reset();
    cpu = process.cpuUsage();
    elu = performance.eventLoopUtilization();
    reply({ type: 'stats', id: message.id, stats: stats() });
  } else if (message.type === 'read') {
    const current = stats();
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      current.profile = `${profileLabel}.cpuprofile`;
      await writeFile(join(profileDir!, current.profile), JSON.stringify(profile));
    }
    reply({ type: 'stats', id: message.id, stats: current });
  } else if (message.type === 'seed-mixed') {
    try {
      const counts = await seedMixed(scoring!.db, stack.subgraphs.find((s) => s.name === 'booking')?.db, BENCH_CLIENT.org);
      // One API client per connection, in the bench organisation (whose rate limit the environment above raises).
      const clients = Array.from({ length: message.clients }, (_, i) => ({ id: `bench-mixed-${i}`, secret: `${BENCH_CLIENT.secret}-mixed-${i}` }));
      for (const client of clients) await stack.gateway.clients.ensure(client.id, client.secret, BENCH_CLIENT.org, parseScopes([...SCOPES]));
      // The Risk Index share is measured on loaded crash data (the first start loads it in the background).
      const risk = stack.subgraphs.find((s) => s.name === 'risk');
      if (risk) await riskDataLoaded(risk.db.orm.em);
      reply({ type: 'seeded', id: message.id, seed: { ...counts, clients } });
    } catch (error) {
      reply({ type: 'failed', id: message.id, problem: (error as Error).message.split('\n')[0] });
    }
  } else if (message.type === 'close') {
    void close().then(() => { reply({ type: 'closed', id: message.id }); process.disconnect?.(); });
  }
});
// The runner went away (crash, Ctrl-C): clean up and leave.
process.on('disconnect', () => { void close().then(() => process.exit(0)); });

reply({
  type: 'ready',
  targets: {
    direct: stack.subgraphUrls,
    gateway: gatewayHttp,
    gatewayInprocess,
    stock: stock.url,
    hive: hive.url,
    hiveNodedup: hiveNodedup.url,
    bare: bare?.url ?? '',
  },
  subgraphs: stack.subgraphs.map((s) => s.name),
  broken,
  client: BENCH_CLIENT,
  database: config.DATABASE_URL ? 'postgresql' : 'pglite (in memory)',
});
