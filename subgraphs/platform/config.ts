import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import { organisationName } from './organisation.ts';

const optionalString = z.string().trim().min(1).optional();
/** A PEM key; `\n` escapes stand for its line breaks, so it fits on one line (as `npm run keys` prints it). */
const pemKey = optionalString.transform((pem) => pem?.replaceAll('\\n', '\n'));

/**
 * The areas (subgraphs), each of which may keep its schema in a PostgreSQL database of its own
 * (`<NAME>_DATABASE_URL`); test/platform/area-databases.test.ts holds this list equal to the registry's.
 */
export const AREA_NAMES = ['booking', 'scoring', 'roadside', 'registration', 'risk', 'webhooks'] as const;
export type AreaName = (typeof AREA_NAMES)[number];

/** Environment variable naming an area's own database, e.g. BOOKING_DATABASE_URL. */
export const databaseUrlVariable = (name: string) => `${name.toUpperCase()}_DATABASE_URL`;

const postgresUrl = z.url({ protocol: /^postgres(ql)?$/ });
const areaDatabaseUrls = Object.fromEntries(AREA_NAMES.map((name) => [databaseUrlVariable(name), postgresUrl.optional()])) as
  Record<`${Uppercase<AreaName>}_DATABASE_URL`, z.ZodOptional<typeof postgresUrl>>;

const areaVariable = (name: AreaName) => databaseUrlVariable(name) as `${Uppercase<AreaName>}_DATABASE_URL`;

const schema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().default('127.0.0.1'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: postgresUrl.optional(),
  ...areaDatabaseUrls,
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  DB_QUERY_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  DATA_DIR: z.string().default('.data'),
  PGLITE_IN_MEMORY: z.stringbool().default(false),
  /**
   * The embedded cluster's buffer cache (PostgreSQL's shared_buffers), resident in its WebAssembly
   * memory from the start. 48 MB holds the shipped data (~18 MB) and keeps its largest table
   * (~9 MB) under the quarter of it past which sequential scans read through a small ring instead.
   */
  PGLITE_SHARED_BUFFERS_MB: z.coerce.number().int().min(1).max(1024).default(48),
  JWT_PRIVATE_KEY: pemKey,
  JWT_PUBLIC_KEY: pemKey,
  JWT_ISSUER: z.string().default('fleet-risk-graph'),
  /** Ed25519 PEM private key the gateway signs internal tokens with (gateway -> subgraph: who calls). */
  INTERNAL_TOKEN_PRIVATE_KEY: pemKey,
  /** Its public key, all a subgraph on its own needs to verify them. */
  INTERNAL_TOKEN_PUBLIC_KEY: pemKey,
  BOOTSTRAP_CLIENT_ID: optionalString,
  BOOTSTRAP_CLIENT_SECRET: z.string().min(16, 'BOOTSTRAP_CLIENT_SECRET must be at least 16 characters').optional(),
  BOOTSTRAP_ORG: organisationName.default('default'),
  MVR_ENCRYPTION_KEY: optionalString,
  /** Older MVR keys still read during a rotation (comma-separated base64). */
  MVR_ENCRYPTION_OLD_KEYS: optionalString,
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(1).default(12),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(1).default(30),
  GRAPHQL_MAX_COST: z.coerce.number().int().min(100).default(20_000),
  /** Objects one GraphQL answer may hold (gateway and every subgraph); past it the answer is one RESPONSE_TOO_LARGE error. */
  GRAPHQL_MAX_RESPONSE_OBJECTS: z.coerce.number().int().min(100).default(50_000),
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().min(100).default(5_000),
  /** Deferred fragments (@defer) one operation may ask for, one inside a list counted once per possible item. */
  GRAPHQL_MAX_DEFERRED: z.coerce.number().int().min(0).default(16),
  GRAPHQL_INTROSPECTION: z.stringbool().default(true),
  REQUEST_COLLAPSING: z.stringbool().default(true),
  /** Nesting of objects and arrays in JSON bodies and GraphQL variables, and of brackets in GraphQL documents, checked before parsing. */
  JSON_MAX_DEPTH: z.coerce.number().int().min(16).max(1_000).default(64),
  /** Browser origins granted CORS (comma-separated, e.g. `http://localhost:3000`); empty: none. */
  CORS_ORIGINS: z.string().default('').transform((list) => list.split(',').map((o) => o.trim()).filter(Boolean))
    .pipe(z.array(z.url({ protocol: /^https?$/ }).refine((o) => URL.canParse(o) && new URL(o).origin === o, 'each CORS origin is scheme://host[:port], no path or trailing slash'))),
  /** A client's active subscriptions over every gateway process (counted in Redis with REDIS_URL, else per process). */
  SUBSCRIPTIONS_MAX_PER_CLIENT: z.coerce.number().int().min(1).default(100),
  /** Active subscriptions one gateway process holds, over every client. */
  SUBSCRIPTIONS_MAX_PER_PROCESS: z.coerce.number().int().min(1).default(10_000),
  /** Largest estimated cost of a subscription document, paid on every event (a tenth of a query's by default). */
  SUBSCRIPTIONS_MAX_COST: z.coerce.number().int().min(100).default(2_000),
  /** Queries a client's subscriptions run a minute, shared executions counted once (in Redis with REDIS_URL). */
  SUBSCRIPTIONS_EXECUTIONS_PER_MINUTE: z.coerce.number().int().min(1).default(600),
  /** `per-subscriber`: one execution per subscriber and event, unbounded, as before sharing (benchmarks only). */
  SUBSCRIPTIONS_FAN_OUT: z.enum(['shared', 'per-subscriber']).default('shared'),
  /** graphql-sse streams one client holds reserved (PUT /graphql/stream), opened or not, in one gateway process. */
  SSE_RESERVATIONS_MAX_PER_CLIENT: z.coerce.number().int().min(1).default(10),
  /** A client's open WebSockets on /graphql over every gateway process (in Redis with REDIS_URL, else per process). */
  SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT: z.coerce.number().int().min(1).default(20),
  /** Open WebSockets one gateway process holds, over every client (about 40 KB and 0.02% of a core each, idle). */
  SUBSCRIPTIONS_MAX_CONNECTIONS_PER_PROCESS: z.coerce.number().int().min(1).default(2_000),
  /** A WebSocket that has started no subscription this long after it opened is closed (1000). */
  SUBSCRIPTIONS_IDLE_CLOSE_MS: z.coerce.number().int().min(100).default(30_000),
  /** A WebSocket is pinged this often; one that has not answered by the next ping is closed. */
  SUBSCRIPTIONS_KEEPALIVE_MS: z.coerce.number().int().min(100).default(12_000),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(1_200),
  /** Requests a minute over every user of one issuer registration (default: 20x RATE_LIMIT_PER_MINUTE). */
  ISSUER_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).optional(),
  /** Failed token attempts a minute for one client id from one address. */
  TOKEN_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(30),
  /** Failed token attempts a minute from one address (an IPv6 /64) over every client id. */
  TOKEN_ADDRESS_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(120),
  /** Shared counters of the request and token-attempt limits; without it each process counts alone. */
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  REDIS_KEY_PREFIX: z.string().min(1).max(64).default('frg:'),
  /** NATS server(s) with JetStream for committed events (comma-separated URLs); unset: events go in-process (one process). */
  NATS_URL: optionalString.refine((urls) => !urls || urls.split(',').every((url) => /^(nats|tls|wss?):\/\/\S+$/.test(url.trim())),
    'comma-separated nats://host:port URLs'),
  /** How long the stream of committed events keeps them (its maximum age). */
  EVENTS_RETENTION_HOURS: z.coerce.number().int().min(1).max(24 * 365).default(72),
  /** How often each area's relay checks its outbox besides being woken by its own process's commits (other processes' commits). */
  EVENTS_RELAY_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  /** The simulated sandbox provider's pace: the time between two moves of a sandbox rescue (5 moves, dispatch to COMPLETED). */
  SANDBOX_RESCUE_STEP_MS: z.coerce.number().int().min(50).max(60_000).default(8_000),
  /** Records of each kind (users, MVRs, rescues, status entries, ...) a sandbox organisation may hold in an area. */
  SANDBOX_MAX_RECORDS: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  /** Gateway processes (node:cluster) sharing the port; more than one needs PostgreSQL. */
  WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  /** Prometheus `GET /metrics` on this port instead of PORT; with WORKERS>1 the primary serves every worker's added up. */
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  /** Address of METRICS_PORT; unset: HOST. */
  METRICS_HOST: optionalString,
  SUBGRAPH_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  /** How the gateway calls subgraphs built in its own process: in-process (no port), or over loopback HTTP (opt-in, benchmarks). */
  SUBGRAPH_TRANSPORT: z.enum(['http', 'inprocess']).default('inprocess'),
  /** Shared key of the gateway -> subgraph hop (HMAC-SHA256); required wherever a subgraph listens. */
  INTERNAL_HOP_KEY: z.string().min(32, 'INTERNAL_HOP_KEY must be at least 32 characters').optional(),
  INTERNAL_HOP_MAX_SKEW_SECONDS: z.coerce.number().int().min(1).max(600).default(30),
  /** Load shedding (gateway): mean event-loop delay over one sample past which requests answer 503; 0 turns the check off. */
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: z.coerce.number().int().min(0).default(200),
  /** Load shedding (gateway): V8 heap in use past which requests answer 503; 0 turns the check off. */
  OVERLOAD_MAX_HEAP_USED_MB: z.coerce.number().int().min(0).default(0),
  OVERLOAD_SAMPLE_INTERVAL_MS: z.coerce.number().int().min(10).max(10_000).default(500),
  OVERLOAD_RETRY_AFTER_SECONDS: z.coerce.number().int().min(1).max(3600).default(5),
  /** Risk Index geometry work (parse, buffer, clip, cells) runs in this many worker threads, each task bounded. */
  RISK_WORKERS: z.coerce.number().int().min(1).max(64).default(Math.max(1, Math.min(4, availableParallelism() - 1))),
  RISK_TASK_TIMEOUT_MS: z.coerce.number().int().min(100).default(5_000),
  RISK_QUEUE_MAX: z.coerce.number().int().min(0).default(32),
  RISK_WORKER_HEAP_MB: z.coerce.number().int().min(64).default(512),
  RISK_MAX_VERTICES: z.coerce.number().int().min(2).default(5_000),
  RISK_MAX_AREA_KM2: z.coerce.number().min(1).default(5_000_000),
  RISK_MAX_CELLS: z.coerce.number().int().min(1).default(10_000),
  RISK_MAX_BUFFERED_VERTICES: z.coerce.number().int().min(100).default(200_000),
  RISK_MAX_POINT_TESTS: z.coerce.number().int().min(1).default(50_000_000),
  /**
   * Basemap of the interactive Risk Index map (GET /riskIndex/v1/map/view): an XYZ tile URL template
   * ({z}, {x}, {y}; {s} for a subdomain). Unset: no basemap, nothing is fetched from outside.
   */
  MAP_TILE_URL: z.string().trim().regex(/^https?:\/\/[^\s"'<>]+$/, 'an http(s) URL template')
    .refine((url) => ['{z}', '{x}', '{y}'].every((p) => url.includes(p)), 'the tile URL template must hold {z}, {x} and {y}').optional(),
  /** Risk Index evaluations (each riskIndex of an operation, REST /riskIndex/v1/* and the map) running at once per gateway process; more answer 503 at once. */
  RISK_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(1000).default(4),
  /** Batch scoring (POST /riskIndex/v1/batches): whether this process runs jobs (off: they wait for a process that does). */
  RISK_BATCH_WORKER: z.stringbool().default(true),
  /** Geometry worker threads of batch scoring, apart from the interactive RISK_WORKERS. */
  RISK_BATCH_WORKERS: z.coerce.number().int().min(1).max(16).default(1),
  /** Share of the time a job's runner works: after a row that took t ms it rests t x (100 / this - 1) ms. */
  RISK_BATCH_DUTY_PERCENT: z.coerce.number().int().min(1).max(100).default(50),
  /** A job's total budget: the runners' working time on its rows; past it the job FAILED, its unscored rows say why. */
  RISK_BATCH_MAX_JOB_SECONDS: z.coerce.number().int().min(1).default(3_600),
  /** How often an idle runner looks for a queued job. */
  RISK_BATCH_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1_000),
  /** Evaluated public Risk Index answers kept in memory by the risk subgraph, MB (0: none); see subgraphs/risk/services/answer-cache.ts. */
  RISK_ANSWER_CACHE_MB: z.coerce.number().min(0).max(4096).default(32),
  /** Days the event history (the webhooks subgraph's `events` table) keeps an event; older ones are pruned. */
  EVENTS_HISTORY_DAYS: z.coerce.number().int().min(1).max(3_650).default(30),
  /** Webhook delivery (wherever the webhooks subgraph runs): off leaves events waiting in the outboxes. */
  WEBHOOK_WORKER: z.stringbool().default(true),
  WEBHOOK_POLL_INTERVAL_MS: z.coerce.number().int().min(10).max(60_000).default(500),
  /** Retry n (1-based) waits WEBHOOK_RETRY_BASE_MS x 4^(n-1); 5 s and 9 attempts span about 30 hours. */
  WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(1).default(5_000),
  WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(20).default(9),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(5_000),
  WEBHOOK_MAX_RESPONSE_BYTES: z.coerce.number().int().min(0).max(1_048_576).default(65_536),
  /** Receivers on loopback (tests, local development); refused otherwise. */
  WEBHOOK_ALLOW_LOOPBACK: z.stringbool().default(false),
  /** OpenID Connect issuers (and their JWKS) on loopback, over plain http too: tests only; refused otherwise. */
  OIDC_ALLOW_LOOPBACK: z.stringbool().default(false),
  /** Attempts in flight at once: in one worker process, and (counted in the database) per organisation and per subscription. */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(32),
  WEBHOOK_CONCURRENCY_PER_ORGANISATION: z.coerce.number().int().min(1).max(1_000).default(8),
  WEBHOOK_CONCURRENCY_PER_SUBSCRIPTION: z.coerce.number().int().min(1).max(100).default(2),
  /** Circuit breaker: after this many failed attempts in a row a subscription is paused for the cool-down, then probed one delivery at a time. */
  WEBHOOK_BREAKER_FAILURES: z.coerce.number().int().min(1).max(1_000).default(5),
  WEBHOOK_BREAKER_COOLDOWN_MS: z.coerce.number().int().min(100).max(86_400_000).default(60_000),
  /**
   * Tracing, read by the OpenTelemetry SDK itself (subgraphs/platform/tracing/): declared here so a
   * malformed value stops the start with its name. Any of the first two turns tracing on.
   */
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_TRACES_EXPORTER: z.string().regex(/^\s*(otlp|console|zipkin|none)(\s*,\s*(otlp|console|zipkin|none))*\s*$/, 'a comma-separated list of otlp, console, zipkin, none').optional(),
  OTEL_SERVICE_NAME: optionalString,
  OTEL_SDK_DISABLED: z.stringbool().default(false),
}).refine((c) => !c.JWT_PRIVATE_KEY === !c.JWT_PUBLIC_KEY, {
  message: 'set JWT_PRIVATE_KEY and JWT_PUBLIC_KEY together (or neither, to generate a pair under DATA_DIR)',
}).refine((c) => !c.BOOTSTRAP_CLIENT_ID === !c.BOOTSTRAP_CLIENT_SECRET, {
  message: 'set BOOTSTRAP_CLIENT_ID and BOOTSTRAP_CLIENT_SECRET together',
}).refine((c) => c.DATABASE_URL || !AREA_NAMES.some((name) => c[areaVariable(name)]), {
  message: `${AREA_NAMES.map(databaseUrlVariable).join(', ')} need DATABASE_URL (PostgreSQL) too: on the embedded default (PGlite) every area `
    + 'lives in the one cluster under DATA_DIR, which one process owns; DATABASE_URL holds the gateway\'s own tables and every area without a database of its own',
}).refine((c) => c.METRICS_PORT !== c.PORT, {
  message: 'METRICS_PORT must differ from PORT (unset it to serve /metrics on PORT)',
});

/** Every variable the schema reads (docs/configuration.md lists them: test/readme.test.ts). */
export const configVariables = Object.keys(schema.shape);

export type Config = z.infer<typeof schema> & { dataDir: string };

/** Reads and validates the environment once; throws with every problem listed. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable (e.g. `FOO=` in compose) means "not set".
  const parsed = schema.safeParse(Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== '')));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`);
    throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  return { ...parsed.data, dataDir: resolve(parsed.data.DATA_DIR) };
}

/** The configuration on an in-memory PGlite, whatever databases the environment names (tools that build, not serve). */
export const inMemoryConfig = (env: NodeJS.ProcessEnv = process.env) => loadConfig({
  ...env, DATABASE_URL: undefined, ...Object.fromEntries(AREA_NAMES.map((name) => [databaseUrlVariable(name), undefined])),
  PGLITE_IN_MEMORY: 'true', LOG_LEVEL: 'warn',
});

/**
 * The PostgreSQL URL of an area's database (its `<NAME>_DATABASE_URL`, else DATABASE_URL), or of the
 * gateway's own (`platform`); undefined on the embedded default.
 */
export function databaseUrl(config: Config, owner: string): string | undefined {
  return (AREA_NAMES as readonly string[]).includes(owner) ? config[areaVariable(owner as AreaName)] ?? config.DATABASE_URL : config.DATABASE_URL;
}

/** Environment variable naming a subgraph's URL, e.g. BOOKING_URL. */
export const subgraphUrlVariable = (name: string) => `${name.toUpperCase()}_URL`;
