/**
 * The server of the many-address flood (risk-flood.ts), in a process of its own so the callers do
 * not share its event loop: the gateway with the risk subgraph only, on a fresh database (PGlite in
 * memory, or one created on DATABASE_URL's server and dropped at the end), in the default
 * configuration (rate limit per address, load shedding), as `npm start` runs it. Sends `ready` with
 * the address once the crash data are loaded; `start`/`stop` bracket the measurement (CPU and
 * event-loop use; BENCH_PROFILE=<folder>: a CPU profile of that span); `close` ends it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildStack } from '../../gateway/stack.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { loadConfig, subgraphUrlVariable } from '../../subgraphs/platform/config.ts';
import { generateHopKey } from '../../subgraphs/platform/internal-hop.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { testDatabase } from '../support/database.ts';

export type FloodServerMessage = { type: 'start' | 'stop' | 'close' };
export type FloodServerReply =
  | { type: 'ready'; base: string; database: string }
  | { type: 'stopped'; cpuMicros: number; eventLoopUtilization: number; profile?: string }
  | { type: 'closed' };

const dataDir = await mkdtemp(join(tmpdir(), 'frg-flood-'));
const database = await testDatabase();
const unreachable = Object.fromEntries(Object.keys(subgraphDefinitions).filter((n) => n !== 'risk').map((n) => [subgraphUrlVariable(n), 'http://127.0.0.1:9/graphql']));
const env = {
  ...process.env, NODE_ENV: 'production' as const, LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn', DATA_DIR: dataDir, DATABASE_URL: undefined,
  INTERNAL_HOP_KEY: process.env.INTERNAL_HOP_KEY ?? generateHopKey(), ...database.env, ...unreachable,
};
const config = loadConfig(env);
const stack = await buildStack(config, env);
const base = await stack.gateway.app.listen({ host: '127.0.0.1', port: 0 });
await riskDataLoaded(stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);

const profileDir = process.env.BENCH_PROFILE;
const profiler = profileDir ? new Session() : undefined;
if (profiler) { profiler.connect(); await profiler.post('Profiler.enable'); }
let cpu = process.cpuUsage();
let elu = performance.eventLoopUtilization();

const reply = (message: FloodServerReply) => process.send?.(message);
let closing: Promise<void> | undefined;
const close = () => (closing ??= (async () => {
  await stack.close().catch(() => undefined);
  await database.drop().catch(() => undefined);
  await rm(dataDir, { recursive: true, force: true });
})());

process.on('message', async (message: FloodServerMessage) => {
  if (message.type === 'start') {
    await profiler?.post('Profiler.start');
    cpu = process.cpuUsage();
    elu = performance.eventLoopUtilization();
  } else if (message.type === 'stop') {
    const used = process.cpuUsage(cpu);
    const stopped: FloodServerReply = { type: 'stopped', cpuMicros: used.user + used.system, eventLoopUtilization: performance.eventLoopUtilization(elu).utilization };
    if (profiler) {
      const { profile } = await profiler.post('Profiler.stop');
      stopped.profile = join(profileDir!, `risk-flood-${Date.now()}.cpuprofile`);
      await writeFile(stopped.profile, JSON.stringify(profile));
    }
    reply(stopped);
  } else if (message.type === 'close') {
    void close().then(() => { reply({ type: 'closed' }); process.disconnect?.(); });
  }
});
process.on('disconnect', () => { void close().then(() => process.exit(0)); });

reply({ type: 'ready', base, database: config.DATABASE_URL ? 'postgresql' : 'pglite (in memory)' });
