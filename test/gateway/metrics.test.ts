import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';

/** The value of the sample `name{labels}` in a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

describe('GET /metrics', () => {
  let t: TestStack;
  beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring'] }); });
  afterAll(async () => { await t?.close(); });

  it('counts HTTP requests by route pattern and GraphQL operations by name, transport and error code', async () => {
    expect((await t.graphql('query MetricsProbe { user(userId: "metrics-nobody") { userId } }')).data).toEqual({ user: null });
    expect((await t.graphql('query MetricsProbe { user(userId: "metrics-nobody-2") { userId } }')).data).toEqual({ user: null });
    const unauth = await t.graphql('query MetricsUnauth { user(userId: "x") { userId } }', {}, null);
    expect(unauth.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    const invalid = await t.graphql('query MetricsInvalid { user(userId: "x") { noSuchField } }');
    expect(invalid.errors?.[0].extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect((await t.request('GET', '/shared-mobility-insights/v2/users/metrics-raw-id', { token: t.token })).status).toBe(404);
    expect((await t.request('POST', '/shared-mobility-insights/v2/users', { token: t.token, body: { userId: 'metrics-user' } })).status).toBe(201);

    const res = await t.request('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = res.body as string;

    // Per REST route: the pattern, never the raw URL.
    expect(sample(text, 'gateway_http_requests_total', { method: 'GET', route: '/shared-mobility-insights/v2/users/:userId', status_code: '404' })).toBe(1);
    expect(sample(text, 'gateway_http_requests_total', { method: 'POST', route: '/shared-mobility-insights/v2/users', status_code: '201' })).toBe(1);
    expect(text).not.toContain('metrics-raw-id');
    expect(sample(text, 'gateway_http_requests_total', { method: 'POST', route: '/graphql', status_code: '200' })).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'gateway_http_request_duration_seconds_count', { method: 'POST', route: '/shared-mobility-insights/v2/users', status_code: '201' })).toBe(1);
    expect(sample(text, 'gateway_http_request_duration_seconds_bucket', { route: '/shared-mobility-insights/v2/users', le: '+Inf' })).toBe(1);

    // Per GraphQL operation: the REST paths count as transport "rest" under their operation's name.
    expect(sample(text, 'gateway_graphql_operations_total', { operation_name: 'MetricsProbe', operation_type: 'query', transport: 'graphql', outcome: 'success' })).toBe(2);
    expect(sample(text, 'gateway_graphql_operation_duration_seconds_count', { operation_name: 'MetricsProbe', transport: 'graphql' })).toBe(2);
    expect(sample(text, 'gateway_graphql_operations_total', { operation_name: 'GetUser', transport: 'rest', outcome: 'success' })).toBe(1);
    expect(sample(text, 'gateway_graphql_operations_total', { operation_name: 'CreateUser', operation_type: 'mutation', transport: 'rest' })).toBe(1);
    expect(sample(text, 'gateway_graphql_operations_total', { operation_name: 'MetricsUnauth', outcome: 'error' })).toBe(1);
    expect(sample(text, 'gateway_graphql_errors_total', { operation_name: 'MetricsUnauth', transport: 'graphql', code: 'UNAUTHENTICATED' })).toBe(1);
    // A document that does not validate has no trustworthy name.
    expect(sample(text, 'gateway_graphql_errors_total', { operation_name: '(invalid)', code: 'GRAPHQL_VALIDATION_FAILED' })).toBe(1);
    expect(text).not.toContain('MetricsInvalid');

    // Subgraph health, probed on scrape: scoring runs, the others were left unreachable.
    expect(sample(text, 'gateway_subgraph_up', { subgraph: 'scoring' })).toBe(1);
    expect(sample(text, 'gateway_subgraph_up', { subgraph: 'booking' })).toBe(0);
    // Node defaults.
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    // The gateway database pool exists on PostgreSQL only.
    if (t.config.DATABASE_URL) expect(sample(text, 'gateway_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    else expect(sample(text, 'gateway_db_pool_connections', { state: 'total' })).toBeUndefined();
  });

  it('labels operation names past a client\'s cap or the total cap as (other) so clients cannot explode cardinality', async () => {
    const { GatewayMetrics, MAX_OPERATION_NAMES, MAX_OPERATION_NAMES_PER_CLIENT } = await import('../../gateway/observability/metrics.ts');
    const metrics = new GatewayMetrics();
    for (let i = 0; i < MAX_OPERATION_NAMES_PER_CLIENT; i += 1) expect(metrics.operationLabel(`Op${i}`, 'c0')).toBe(`Op${i}`);
    expect(metrics.operationLabel('Op0', 'c0')).toBe('Op0');
    expect(metrics.operationLabel('OneTooMany', 'c0')).toBe('(other)');
    // Another client's slots are its own, a name labelled for another client included.
    expect(metrics.operationLabel('OneTooMany', 'c1')).toBe('OneTooMany');
    expect(metrics.operationLabel('Op0', 'c1')).toBe('Op0');
    const total = new GatewayMetrics();
    for (let i = 0; i < MAX_OPERATION_NAMES; i += 1) expect(total.operationLabel(`Op${i}`, `c${Math.floor(i / MAX_OPERATION_NAMES_PER_CLIENT)}`)).toBe(`Op${i}`);
    expect(total.operationLabel('PastTheTotal', 'a-new-client')).toBe('(other)');
    expect(total.operationLabel('Op0', 'a-new-client')).toBe('Op0');
    expect(metrics.operationLabel(undefined)).toBe('(anonymous)');
    expect(new GatewayMetrics().operationLabel(`Long${'x'.repeat(200)}`)).toBe('(other)');
  });

  it('stays small and answerable after a flood of huge and distinct operation names', async () => {
    const { MAX_OPERATION_NAMES_PER_CLIENT } = await import('../../gateway/observability/metrics.ts');
    const huge = (i: number) => `Flood${i}${'N'.repeat(100_000)}`;
    for (let i = 0; i < 40; i += 1) {
      const res = await t.graphql(`query ${huge(i)} { __typename }`);
      expect(res.data).toEqual({ __typename: 'Query' });
    }
    // More distinct short names than a client's cap.
    const distinct = MAX_OPERATION_NAMES_PER_CLIENT + 200;
    await Promise.all(Array.from({ length: 4 }, async (_, lane) => {
      for (let i = lane; i < distinct; i += 4) expect((await t.graphql(`query Distinct${i} { __typename }`)).status).toBe(200);
    }));
    const res = await t.request('GET', '/metrics');
    expect(res.status).toBe(200);
    const text = res.body as string;
    expect(text).not.toContain('NNNNNNNNNN');
    expect(sample(text, 'gateway_graphql_operations_total', { operation_name: '(other)', transport: 'graphql', outcome: 'success' })).toBeGreaterThanOrEqual(40);
    const labelled = new Set([...text.matchAll(/operation_name="([^"]*)"/g)].map((m) => m[1]));
    // The client's 20 (MetricsProbe and the like among them), the REST paths' own names, (other), (anonymous), (invalid).
    expect([...labelled].filter((name) => /^(Distinct|Flood)/.test(name)).length).toBeLessThanOrEqual(MAX_OPERATION_NAMES_PER_CLIENT);
    console.log(`metrics after a flood of 40 names of 100 KB and ${distinct} distinct names: ${(text.length / 1024).toFixed(0)} KB, ${labelled.size} operation labels`);
    expect(text.length).toBeLessThan(1024 * 1024);
  }, 180_000);
});

describe('METRICS_PORT configuration', () => {
  it('is optional, binds on HOST unless METRICS_HOST says otherwise, and must not be PORT', async () => {
    const { loadConfig } = await import('../../subgraphs/platform/config.ts');
    expect(loadConfig({}).METRICS_PORT).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '9464' }).METRICS_PORT).toBe(9464);
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '10.0.0.5' }).METRICS_HOST).toBe('10.0.0.5');
    expect(() => loadConfig({ PORT: '4000', METRICS_PORT: '4000' })).toThrow('METRICS_PORT must differ from PORT');
    expect(() => loadConfig({ METRICS_PORT: '70000' })).toThrow('METRICS_PORT');
  });
});
