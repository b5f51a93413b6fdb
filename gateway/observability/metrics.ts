/**
 * Prometheus metrics (prom-client), one registry per gateway process:
 * - HTTP requests by method, route pattern (never the raw URL) and status: count and latency;
 * - GraphQL operations by operation name and type, the app that sent them (client awareness), and transport (`graphql` for /graphql, `rest`
 *   for the REST paths, which run their operation in-process, `subscription` for the query a
 *   subscription runs per event): count, latency, errors by code;
 * - Idempotency-Key outcomes (run, replayed, in progress, reused for another request, released);
 * - requests collapsed into an identical one in flight (graphql or rest); operations count executions, so a collapsed request counts there only once;
 * - subscriptions held (by transport), the queries run for them (shared executions), the results pushed to them, the
 *   connections and streams that ended (by reason);
 * - subgraph health and the gateway database pool (PostgreSQL), read on each collection; Node defaults;
 * - the Risk Index answer cache of a risk subgraph in this process: lookups by outcome, bytes held.
 * Each metric's `aggregator` says how node:cluster workers' values add up (see metrics-server.ts).
 * Served at `GET /metrics` on the public port, unless `route` is false (METRICS_PORT, or WORKERS>1).
 */
import type { ApolloServerPlugin, GraphQLRequestContext } from '@apollo/server';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { CLIENT_NAME_HEADER } from '../../subgraphs/platform/client-app.ts';
import type { Database } from '../../subgraphs/platform/db/orm.ts';
import type { AnswerCacheStats } from '../../subgraphs/platform/public-answers.ts';
import { ClientNames } from './client-names.ts';
import { afterLastPart } from '../query-plan-executor/gateway.ts';

export const METRICS_PATH = '/metrics';
const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/**
 * Operation names come from clients: a name this long, or new past this many names of its client or
 * this many in all, counts as `(other)`; a client's slots are its own, so one filling its slots
 * leaves the others theirs (until the total is reached).
 */
export const MAX_OPERATION_NAMES_PER_CLIENT = 20;
export const MAX_OPERATION_NAMES = 500;
export const MAX_OPERATION_NAME_LENGTH = 100;
const START_TIME = 'process_start_time_seconds';
/** The operation-name slots of callers without a token (the Risk Index), shared by all of them. */
const ANONYMOUS_CLIENT = '';

export interface MetricsSources {
  /** Readiness probe of each subgraph, by name (for `gateway_subgraph_up`). */
  probes?: Record<string, () => Promise<boolean>>;
  /** The gateway's own database (its pool for `gateway_db_pool_connections`). */
  db?: Database;
  /** The use of the risk subgraph's answer cache, when it runs in this process. */
  riskAnswers?: () => AnswerCacheStats | null;
}

interface PoolLike { totalCount: number; idleCount: number; waitingCount: number }
const isPool = (value: unknown): value is PoolLike => typeof (value as PoolLike | null)?.totalCount === 'number';

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly httpRequests: Counter<'method' | 'route' | 'status_code'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  readonly operations: Counter<'operation_name' | 'operation_type' | 'transport' | 'outcome' | 'client_name'>;
  /** The `client_name` label's names (Apollo Client's client awareness), bounded per deployment. */
  readonly clientNames = new ClientNames();
  readonly operationDuration: Histogram<'operation_name' | 'operation_type' | 'transport'>;
  readonly operationErrors: Counter<'operation_name' | 'transport' | 'code'>;
  readonly subgraphUp: Gauge<'subgraph'>;
  readonly dbPool: Gauge<'state'>;
  readonly idempotency: Counter<'outcome'>;
  readonly collapsed: Counter<'kind'>;
  readonly subscriptionsActive: Gauge<'transport'>;
  readonly subscriptionEvents: Counter<'transport'>;
  readonly subscriptionsClosed: Counter<'reason'>;
  readonly subscriptionExecutions: Counter;
  private readonly operationNames = new Set<string>();
  private readonly clientOperationNames = new Map<string, Set<string>>();

  constructor({ probes = {}, db, riskAnswers }: MetricsSources = {}) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    // prom-client omits the start time from a cluster's sum; the latest start among the workers is
    // the one that means something there: the summed counters have run without a reset since then.
    this.registry.removeSingleMetric(START_TIME);
    const started = Math.round(Date.now() / 1000 - process.uptime());
    new Gauge({ name: START_TIME, help: 'Start time of the process since unix epoch in seconds (over a cluster: of the latest-started worker)', aggregator: 'max', registers, collect() { this.set(started); } });
    new Gauge({ name: 'gateway_processes', help: 'Gateway processes whose metrics this scrape adds up (the workers that answered)', registers, collect() { this.set(1); } });
    this.httpRequests = new Counter({ name: 'gateway_http_requests_total', help: 'HTTP requests by method, route pattern and status code', labelNames: ['method', 'route', 'status_code'], registers });
    this.httpDuration = new Histogram({ name: 'gateway_http_request_duration_seconds', help: 'HTTP request latency by method, route pattern and status code', labelNames: ['method', 'route', 'status_code'], buckets: SECONDS_BUCKETS, registers });
    this.operations = new Counter({
      name: 'gateway_graphql_operations_total', help: 'GraphQL operations by name, type, transport (graphql or rest), outcome (success or error) and the app that sent them (apollographql-client-name)',
      labelNames: ['operation_name', 'operation_type', 'transport', 'outcome', 'client_name'], registers,
    });
    this.operationDuration = new Histogram({ name: 'gateway_graphql_operation_duration_seconds', help: 'GraphQL operation latency by name, type and transport', labelNames: ['operation_name', 'operation_type', 'transport'], buckets: SECONDS_BUCKETS, registers });
    this.operationErrors = new Counter({ name: 'gateway_graphql_errors_total', help: 'GraphQL errors by operation name, transport and extensions.code', labelNames: ['operation_name', 'transport', 'code'], registers });
    this.subgraphUp = new Gauge({
      name: 'gateway_subgraph_up', help: '1 when the subgraph answers its readiness probe (from every worker), else 0; probed on scrape', labelNames: ['subgraph'], registers, aggregator: 'min',
      async collect() {
        await Promise.all(Object.entries(probes).map(async ([name, probe]) => { this.set({ subgraph: name }, (await probe()) ? 1 : 0); }));
      },
    });
    new Gauge({
      name: 'gateway_risk_answer_cache_lookups', help: 'Risk Index answer parts looked up in the answer cache since the start, by outcome: hit, shared (an identical evaluation in flight), miss (evaluated)',
      labelNames: ['outcome'], registers,
      collect() {
        const stats = riskAnswers?.();
        if (stats) for (const [outcome, count] of [['hit', stats.hits], ['shared', stats.shared], ['miss', stats.misses]] as const) this.set({ outcome }, count);
      },
    });
    new Gauge({ name: 'gateway_risk_answer_cache_bytes', help: 'Estimated bytes of the Risk Index answers held (RISK_ANSWER_CACHE_MB bounds it)', registers, collect() { const stats = riskAnswers?.(); if (stats) this.set(stats.bytes); } });
    this.idempotency = new Counter({
      name: 'gateway_idempotency_requests_total',
      help: 'Requests with an Idempotency-Key by outcome: claimed (ran), replay, forbidden (403), withheld (409, a secret), '
        + 'in_progress (409), mismatch (422), invalid (400), released (not kept)',
      labelNames: ['outcome'], registers,
    });
    this.collapsed = new Counter({ name: 'gateway_collapsed_requests_total', help: 'Requests answered with the answer of an identical one in flight instead of running (REQUEST_COLLAPSING), by kind: graphql (/graphql) or rest (a REST row)', labelNames: ['kind'], registers });
    this.subscriptionsActive = new Gauge({ name: 'gateway_subscriptions_active', help: 'Subscriptions held now by transport (ws: graphql-ws on /graphql, sse: graphql-sse at /graphql/stream)', labelNames: ['transport'], registers });
    this.subscriptionEvents = new Counter({ name: 'gateway_subscription_events_pushed_total', help: 'Results pushed to subscribers (one per event and subscription) by transport', labelNames: ['transport'], registers });
    this.subscriptionExecutions = new Counter({ name: 'gateway_subscription_executions_total', help: 'Queries run for subscriptions: one per event and shared execution (subscriptions with the same document, variables and identity share one)', registers });
    this.subscriptionsClosed = new Counter({ name: 'gateway_subscriptions_closed_total', help: 'Connections (WebSocket) or streams (SSE) that ended, by reason (gateway/subscriptions/close-codes.ts: client_closed, keepalive_timeout, slow_consumer, idle, too_many, revoked, shutdown, ...)', labelNames: ['reason'], registers });
    this.dbPool = new Gauge({
      name: 'gateway_db_pool_connections', help: "Connections of the gateway database's pool by state (total, idle, waiting); PostgreSQL only", labelNames: ['state'], registers,
      async collect() {
        const pool = await db?.orm.em.getConnection().getNativeClient().catch(() => null);
        if (!isPool(pool)) return;
        this.set({ state: 'total' }, pool.totalCount);
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
  }

  /** A bounded label for an operation name chosen by `client` (its id; callers without a token share one). */
  operationLabel(name: string | null | undefined, client = ANONYMOUS_CLIENT): string {
    if (!name) return '(anonymous)';
    if (name.length > MAX_OPERATION_NAME_LENGTH) return '(other)';
    let mine = this.clientOperationNames.get(client);
    if (mine?.has(name)) return name;
    if ((mine?.size ?? 0) >= MAX_OPERATION_NAMES_PER_CLIENT) return '(other)';
    if (!this.operationNames.has(name) && this.operationNames.size >= MAX_OPERATION_NAMES) return '(other)';
    if (!mine) this.clientOperationNames.set(client, mine = new Set());
    mine.add(name);
    this.operationNames.add(name);
    return name;
  }

  /** The Apollo Server plugin that records operations; add it to the gateway's `plugins`. */
  apolloPlugin<T extends object>(): ApolloServerPlugin<T> {
    const { operationLabel, operations, operationDuration, operationErrors, clientNames } = this;
    const label = operationLabel.bind(this);
    return {
      async requestDidStart(start: GraphQLRequestContext<T>) {
        const began = process.hrtime.bigint();
        const transport = start.request.http ? 'graphql' : (start.contextValue as { transport?: string }).transport ?? 'rest';
        let resolved = false;
        return {
          async didResolveOperation() { resolved = true; },
          async willSendResponse(ctx) {
            // An operation that failed to parse or validate has no trustworthy name; a REST path's is ours (its route's).
            const name = !resolved ? '(invalid)'
              : transport === 'rest' ? ctx.operationName ?? '(anonymous)' : label(ctx.operationName, (ctx.contextValue as { clientId?: string }).clientId);
            const type = ctx.operation?.operation ?? 'unknown';
            const primary = ctx.errors ?? (ctx.response.body.kind === 'single' ? ctx.response.body.singleResult.errors : undefined) ?? [];
            const clientName = await clientNames.label(transport === 'graphql' ? start.request.http?.headers.get(CLIENT_NAME_HEADER) : undefined);
            // A deferred operation is one operation: counted, with its deferred parts' errors, once its last part is fetched.
            afterLastPart(ctx.contextValue, (deferred) => {
              const errors = [...primary, ...deferred];
              for (const error of errors) {
                operationErrors.inc({ operation_name: name, transport, code: String(error.extensions?.code ?? 'INTERNAL_SERVER_ERROR') });
              }
              operations.inc({ operation_name: name, operation_type: type, transport, outcome: errors.length ? 'error' : 'success', client_name: clientName });
              operationDuration.observe({ operation_name: name, operation_type: type, transport }, Number(process.hrtime.bigint() - began) / 1e9);
            });
          },
        };
      },
    };
  }
}

export interface MetricsPluginOptions {
  metrics: GatewayMetrics;
  /** Serve `GET /metrics` on this server; false when they are served elsewhere (METRICS_PORT) or not at all. */
  route: boolean;
}

async function metricsRoutes(app: FastifyInstance, { metrics, route }: MetricsPluginOptions) {
  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? '(unmatched)', status_code: String(reply.statusCode) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
  });
  if (route) {
    app.get(METRICS_PATH, async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()));
  }
}

/** Register on the root instance: `await app.register(metricsPlugin, { metrics, route })`. */
export const metricsPlugin = fp(metricsRoutes, { name: 'gateway-metrics' });
