/**
 * `node test/bench/layers.ts <profile folder> [scenario...]`
 *
 * Where a request's CPU goes, by layer, from the CPU profiles `BENCH_PROFILE=<folder> npm run bench`
 * writes (one per round of each measurement, listed in the folder's index.json with its request
 * count). Every sample's self time goes to the layer of its function's file; a function of a shared
 * library (graphql-js, Node's internals, dataloader...) inherits the layer of its nearest caller that
 * has one, so graphql-js validating in the gateway counts as the Apollo Server pipeline and the same
 * code executing a subgraph's resolvers as subgraph execution. The profiler samples wall-clock
 * time, which a busy machine inflates (a descheduled thread keeps its last frame), so each
 * layer's share of the samples is applied to the process's measured CPU time per request. Prints a
 * Markdown table of microseconds per request per layer, one column per scenario/variant.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

interface CallFrame { functionName: string; url: string }
interface ProfileNode { id: number; callFrame: CallFrame; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }
export interface ProfileEntry { file: string; scenario: string; variant: string; requests: number; cpuMicros: number }

export const LAYERS = [
  'Fastify (HTTP server, routing, hooks)',
  'token check (jose, token gate)',
  'REST mapping (gateway/rest)',
  'Apollo Server request pipeline',
  'query planning',
  'gateway execution',
  'subgraph HTTP hop (fetcher, internal-hop)',
  'subgraph execution (graphql execute, resolvers)',
  'ORM (MikroORM, kysely)',
  'driver (pg / PGlite)',
  'serialisation (JSON)',
  'Node HTTP and I/O',
  'metrics, logs, tracing',
  'garbage collection',
  'other',
] as const;
export type Layer = (typeof LAYERS)[number];

/** The layer a file belongs to, or undefined for shared code (inherits its caller's layer). */
function layerOf({ url, functionName }: CallFrame): Layer | undefined {
  if (functionName === '(garbage collector)') return 'garbage collection';
  if (functionName === '(program)') return 'other';
  if (/JSON|stringify|serialize/i.test(functionName) && (!url || /fast-json-stringify|fastify\/lib\/reply|safe-stable-stringify/.test(url))) return 'serialisation (JSON)';
  if (!url) return undefined;
  const m = (re: RegExp) => re.test(url);
  if (m(/node_modules\/(fast-json-stringify|safe-stable-stringify|secure-json-parse)\//)) return 'serialisation (JSON)';
  if (m(/node_modules\/jose\//) || m(/gateway\/auth\/token-gate|platform\/auth\/tokens/)) return 'token check (jose, token gate)';
  if (m(/gateway\/rest\//)) return 'REST mapping (gateway/rest)';
  if (m(/node_modules\/@apollo\/(query-planner|federation-internals|query-graphs)\//)) return 'query planning';
  if (m(/node_modules\/@apollo\/gateway\/dist\/(executeQueryPlan|resultShaping|dataRewrites)/)) return 'gateway execution';
  if (m(/gateway\/datasources/) && /^(process|document|format|isVariableCoercionError)$/.test(functionName)) return 'subgraph execution (graphql execute, resolvers)';
  if (m(/gateway\/datasources|platform\/internal-hop|node_modules\/(make-fetch-happen|minipass|node-fetch)/)) return 'subgraph HTTP hop (fetcher, internal-hop)';
  if (m(/node_modules\/@apollo\/gateway\//)) return 'gateway execution';
  if (m(/node_modules\/graphql\/execution\//) || m(/node_modules\/@apollo\/subgraph\//) || m(/\/subgraphs\/(?!platform\/db)/)) return 'subgraph execution (graphql execute, resolvers)';
  if (m(/node_modules\/@apollo\/(server|utils|usage-reporting)|node_modules\/@as-integrations|node_modules\/@escape\.tech|gateway\/app\.ts|gateway\/supergraph/)) return 'Apollo Server request pipeline';
  if (m(/node_modules\/(@mikro-orm\/(core|sql|knex)|kysely)\/|platform\/db\//)) return 'ORM (MikroORM, kysely)';
  if (m(/node_modules\/(pg|pg-protocol|pg-types|pg-pool|postgres-[a-z]+|@electric-sql\/pglite|@mikro-orm\/(pglite|postgresql))\//)) return 'driver (pg / PGlite)';
  if (m(/node_modules\/(pino|prom-client|thread-stream|sonic-boom|@opentelemetry|@fastify\/otel|import-in-the-middle)|gateway\/observability|platform\/log|platform\/tracing/)) return 'metrics, logs, tracing';
  if (m(/node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|fast-querystring|fastq|toad-cache|fast-content-type-parse|process-warning)\//)) return 'Fastify (HTTP server, routing, hooks)';
  // Node's sockets and HTTP parser/writer, whoever called them (a sample in a write includes the syscall).
  if (m(/^node:(_http_|net$|internal\/(http|net|stream_base_commons|streams\/|dns|tls))/)) return 'Node HTTP and I/O';
  return undefined;
}

/** Self time per layer (µs) of one profile. */
export function attribute(profile: Profile): Record<Layer, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const layer = new Map<number, Layer | 'profiler'>();
  const resolve = (id: number): Layer | 'profiler' => {
    const known = layer.get(id);
    if (known) return known;
    const node = byId.get(id)!;
    // The profiler's own start/stop (node:inspector and what it calls) is not the servers' work.
    let own: Layer | 'profiler' | undefined = node.callFrame.url === 'node:inspector' ? 'profiler' : layerOf(node.callFrame);
    if (!own) {
      const up = parent.get(id);
      // Node's own HTTP/net code with no layered caller is the server's I/O; other callerless code is "other".
      own = up !== undefined && byId.get(up)!.callFrame.functionName !== '(root)' ? resolve(up) : 'other';
    }
    layer.set(id, own);
    return own;
  };
  const totals = Object.fromEntries(LAYERS.map((l) => [l, 0])) as Record<Layer, number>;
  for (const [i, id] of profile.samples.entries()) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    const l = resolve(id);
    if (l !== 'profiler') totals[l] += profile.timeDeltas[i] ?? 0;
  }
  return totals;
}

/** µs per request per layer for each scenario/variant in the folder (rounds pooled). */
export async function breakdown(dir: string, only: string[] = []) {
  const index = JSON.parse(await readFile(join(dir, 'index.json'), 'utf8')) as ProfileEntry[];
  const columns = new Map<string, { totals: Record<Layer, number>; requests: number }>();
  for (const entry of index) {
    if (only.length && !only.includes(entry.scenario)) continue;
    const key = `${entry.scenario} / ${entry.variant}`;
    const column = columns.get(key) ?? { totals: Object.fromEntries(LAYERS.map((l) => [l, 0])) as Record<Layer, number>, requests: 0 };
    const totals = attribute(JSON.parse(await readFile(join(dir, entry.file), 'utf8')) as Profile);
    const sampled = LAYERS.reduce((a, l) => a + totals[l], 0);
    for (const l of LAYERS) column.totals[l] += sampled ? (totals[l] / sampled) * entry.cpuMicros : 0;
    column.requests += entry.requests;
    columns.set(key, column);
  }
  return [...columns.entries()].map(([key, { totals, requests }]) => ({
    key, requests, perRequest: Object.fromEntries(LAYERS.map((l) => [l, requests ? totals[l] / requests : 0])) as Record<Layer, number>,
  }));
}

export function markdown(columns: Awaited<ReturnType<typeof breakdown>>) {
  const head = `| layer (µs per request) | ${columns.map((c) => c.key).join(' | ')} |\n|---|${columns.map(() => '---:').join('|')}|`;
  const rows = LAYERS.map((l) => `| ${l} | ${columns.map((c) => Math.round(c.perRequest[l])).join(' | ')} |`);
  const total = `| **total** | ${columns.map((c) => `**${Math.round(LAYERS.reduce((a, l) => a + c.perRequest[l], 0))}**`).join(' | ')} |`;
  return [head, ...rows, total].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [dir, ...only] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: node test/bench/layers.ts <BENCH_PROFILE folder> [scenario...]');
    process.exit(2);
  }
  console.log(markdown(await breakdown(dir, only)));
}
