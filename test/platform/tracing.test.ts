/**
 * OpenTelemetry: the server started as `npm start` starts it (the tracing preload), exporting over
 * OTLP (http/json here) to a local receiver. One request gives one trace, continuing the caller's
 * `traceparent`, across the gateway, the subgraphs it calls (in process and over HTTP) and their SQL
 * (pg instrumentation on PostgreSQL, hand-made spans on PGlite). The app a request names (client
 * awareness) is on the gateway's request span. With tracing off nothing is loaded.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { tracingEnabled } from '../../subgraphs/platform/tracing/switch.ts';
import { runNode, startChildServer, type ChildServer } from '../support/child-server.ts';
import { testDatabase } from '../support/database.ts';
import { otlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.ts';

const PRELOAD = './subgraphs/platform/tracing/preload.ts';
const CLIENT = { id: 'tracing-client', secret: 'tracing-secret-0123456789' };
const SERVER = 2;
const CLIENT_KIND = 3;

describe('tracingEnabled', () => {
  it('follows the standard OTEL_* variables', () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ OTEL_SERVICE_NAME: 'gateway' })).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingEnabled({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(false);
    expect(tracingEnabled({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBe(false);
  });

  it('a malformed OTEL_* value stops the start with its name', () => {
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'otlp, console' }).OTEL_SDK_DISABLED).toBe(false);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    expect(() => loadConfig({ OTEL_TRACES_EXPORTER: 'jaeger' })).toThrow(/OTEL_TRACES_EXPORTER/);
  });
});

describe('the tracing preload', () => {
  // Records every module the process resolves, from before the preload runs.
  const observer = `data:text/javascript,${encodeURIComponent(`import { registerHooks } from 'node:module';
globalThis.resolved = [];
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); globalThis.resolved.push(r.url); return r; } });`)}`;
  const loaded = async (env: Record<string, string>) => {
    const run = await runNode(['--import', observer, '--import', PRELOAD, '--input-type=module', '-e', 'console.log(JSON.stringify(globalThis.resolved))'],
      { OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '', OTEL_SDK_DISABLED: '', ...env });
    expect(run.code, run.stderr).toBe(0);
    return (JSON.parse(run.stdout.trim().split('\n').at(-1)!) as string[]).filter((url) => url.includes('opentelemetry') || url.includes('/tracing/sdk.ts'));
  };

  it('loads no OpenTelemetry module when tracing is off, and the SDK when it is on', async () => {
    expect(await loaded({})).toEqual([]);
    expect(await loaded({ OTEL_TRACES_EXPORTER: 'none' })).toEqual([]);
    expect((await loaded({ OTEL_TRACES_EXPORTER: 'console' })).some((url) => url.includes('@opentelemetry/sdk-node'))).toBe(true);
  });
});

/** Every span hangs from the caller's span through spans of the same trace; one root. */
function expectOneTree(spans: ReceivedSpan[], callerSpanId: string) {
  const ids = new Set(spans.map((s) => s.spanId));
  expect(spans.filter((s) => s.parentSpanId === callerSpanId)).toHaveLength(1);
  expect(spans.filter((s) => s.parentSpanId !== callerSpanId && !ids.has(s.parentSpanId)).map((s) => s.name)).toEqual([]);
}

const ancestors = (spans: ReceivedSpan[], span: ReceivedSpan) => {
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const chain: ReceivedSpan[] = [];
  for (let at = byId.get(span.parentSpanId); at; at = byId.get(at.parentSpanId)) chain.push(at);
  return chain;
};

/** SQL spans by the subgraph they ran for: the service of the gateway fetch above them. */
function sqlBySubgraph(spans: ReceivedSpan[]) {
  const found: Record<string, number> = {};
  for (const span of spans.filter((s) => s.attributes['db.system.name'] === 'postgresql')) {
    const service = String(ancestors(spans, span).find((s) => s.name === 'gateway.fetch')?.attributes.service);
    found[service] = (found[service] ?? 0) + 1;
  }
  return found;
}

describe.each(['inprocess', 'http'] as const)('one trace per request (SUBGRAPH_TRANSPORT=%s)', (transport) => {
  let receiver: Awaited<ReturnType<typeof otlpReceiver>>;
  let database: Awaited<ReturnType<typeof testDatabase>>;
  let server: ChildServer;
  let headers: Record<string, string>;

  /** Sends a request as a traced caller would, and returns the spans of its trace once its root span arrived. */
  async function traced(path: string, init: RequestInit, extra: Record<string, string> = {}) {
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const response = await fetch(`${server.base}${path}`, { ...init, headers: { ...headers, ...extra, traceparent: `00-${traceId}-${callerSpanId}-01` } });
    expect(response.status, await response.clone().text()).toBe(200);
    const spans = await receiver.trace(traceId, (mine) => mine.some((s) => s.parentSpanId === callerSpanId));
    return { spans, callerSpanId, body: await response.json() as Record<string, unknown> };
  }

  beforeAll(async () => {
    receiver = await otlpReceiver();
    database = await testDatabase();
    server = await startChildServer({
      ...database.env, SUBGRAPH_TRANSPORT: transport, NODE_OPTIONS: `--import ${PRELOAD}`, LOG_LEVEL: 'warn',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100',
      BOOTSTRAP_CLIENT_ID: CLIENT.id, BOOTSTRAP_CLIENT_SECRET: CLIENT.secret,
    });
    const token = await fetch(`${server.base}/platform/oauth/v1/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT.id, client_secret: CLIENT.secret }),
    }).then((r) => r.json() as Promise<{ access_token: string }>);
    headers = { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json' };
    const created = await fetch(`${server.base}/shared-mobility-insights/v2/users/traced-user`, { method: 'POST', headers, body: JSON.stringify({ dateOfBirth: '1990-01-01', homeZip: '60601' }) });
    expect(created.status).toBe(201);
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    await database?.drop();
    await receiver?.close();
  });

  it('a REST path: the gateway, the scoring subgraph and its SQL, continuing the caller\'s trace', async () => {
    const { spans, callerSpanId, body } = await traced('/shared-mobility-insights/v2/users/traced-user', { method: 'GET' });
    expect(body.userId).toBe('traced-user');
    expectOneTree(spans, callerSpanId);
    const root = spans.find((s) => s.parentSpanId === callerSpanId)!;
    expect(root).toMatchObject({ service: 'gateway', kind: SERVER });
    expect(spans.some((s) => s.scope === '@fastify/otel' && s.attributes['http.route'] === '/shared-mobility-insights/v2/users/:userId')).toBe(true);
    expect(spans.filter((s) => s.name === 'gateway.fetch').map((s) => s.attributes.service)).toEqual(['scoring']);
    expect(sqlBySubgraph(spans).scoring).toBeGreaterThan(0);
    console.log(`REST user lookup (${transport}, ${database.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}): ${spans.length} spans`);
  });

  it('a cross-subgraph query: scoring and booking, each with its SQL, in one trace', async () => {
    const query = 'query TracedCross { user(userId: "traced-user") { userId bookings(first: 5) { nodes { bookingId } } } }';
    const app = { 'apollographql-client-name': 'fleet-web', 'apollographql-client-version': '2.3.1' };
    const { spans, callerSpanId, body } = await traced('/graphql', { method: 'POST', body: JSON.stringify({ query }) }, app);
    expect(body).toEqual({ data: { user: { userId: 'traced-user', bookings: { nodes: [] } } } });
    expectOneTree(spans, callerSpanId);
    // Client awareness on the gateway's request span.
    const named = spans.filter((s) => s.attributes['graphql.client.name'] !== undefined);
    expect(named.map((s) => [s.service, s.scope, s.attributes['graphql.client.name'], s.attributes['graphql.client.version']]))
      .toEqual([['gateway', '@fastify/otel', 'fleet-web', '2.3.1']]);
    expect(spans.filter((s) => s.name === 'gateway.fetch').map((s) => s.attributes.service).sort()).toEqual(['booking', 'scoring']);
    const sql = sqlBySubgraph(spans);
    expect(sql.scoring).toBeGreaterThan(0);
    expect(sql.booking).toBeGreaterThan(0);
    if (transport === 'http') {
      // Each fetch leaves as an HTTP client span and arrives as the subgraph's server span, its child.
      for (const fetchSpan of spans.filter((s) => s.name === 'gateway.fetch')) {
        const client = spans.find((s) => s.kind === CLIENT_KIND && s.parentSpanId === fetchSpan.spanId);
        expect(client, String(fetchSpan.attributes.service)).toBeDefined();
        expect(spans.some((s) => s.kind === SERVER && s.parentSpanId === client!.spanId)).toBe(true);
      }
    }
    console.log(`cross-subgraph query (${transport}, ${database.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'}): ${spans.length} spans`);
  });
});

describe('shutdown', () => {
  it('exports the spans still buffered when the server stops (SIGTERM)', async () => {
    const receiver = await otlpReceiver();
    // Batches would leave only after a minute: what arrives, arrives because of the shutdown.
    const server = await startChildServer({ NODE_OPTIONS: `--import ${PRELOAD}`, LOG_LEVEL: 'warn', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '60000' });
    try {
      const traceId = randomBytes(16).toString('hex');
      const response = await fetch(`${server.base}/openapi.json`, { headers: { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` } });
      expect(response.status).toBe(200);
      await response.arrayBuffer();
      expect(receiver.spans.filter((s) => s.traceId === traceId)).toEqual([]);
      await server.stop();
      expect(await server.exited).toBe(0);
      expect(receiver.spans.some((s) => s.traceId === traceId && s.kind === SERVER)).toBe(true);
    } finally {
      await server.stop();
      await receiver.close();
    }
  }, 60_000);
});
