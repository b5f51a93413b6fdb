import type { ApolloServer, ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyPluginAsync, FastifyPluginCallback, FastifyPluginOptions } from 'fastify';
import type { TokenVerifier } from './auth/token-gate.ts';
import type { RevocationCheck } from './auth/revocation.ts';
import type { Config } from '../subgraphs/platform/config.ts';
import type { EventBus } from '../subgraphs/platform/events/bus.ts';
import type { Database } from '../subgraphs/platform/db/orm.ts';
import type { graphqlLimits } from '../subgraphs/platform/graphql-limits.ts';
import { boundedJsonPlugin } from '../subgraphs/platform/nesting-http.ts';
import type { PublicAnswers } from '../subgraphs/platform/public-answers.ts';
import type { Subgraph } from '../subgraphs/platform/subgraph.ts';
import { subscriptionsElsewherePlugin } from '../subgraphs/platform/subscriptions-elsewhere.ts';
import type { ClientStore } from './auth/clients.ts';
import type { IssuerStore } from './auth/issuers.ts';
import type { TrustedIssuers } from './auth/oidc/trusted-issuers.ts';
import type { createTokenGate } from './auth/token-gate.ts';
import { tokenEndpointsPlugin } from './auth/token-endpoints.ts';
import type { TokenDeps } from './auth/token-route.ts';
import { browserAccessPlugin } from './http/browser-access.ts';
import type { RequestCollapsing } from './collapse/requests.ts';
import { docsPlugin } from './docs/index.ts';
import { gatedRoutes } from './gated-routes.ts';
import { healthPlugin } from './health.ts';
import { homePlugin } from './home.ts';
import type { DocumentByHash } from './idempotency/request.ts';
import type { IdempotencyStore } from './idempotency/store.ts';
import type { TrustedDocuments } from './trusted/registry.ts';
import type { TrustedDocumentStore } from './trusted/store.ts';
import { idePlugin } from './ide/index.ts';
import { deferLimitsPlugin } from './protection/defer-limits.ts';
import { restInFlightPlugin, type RestInFlightBound } from './protection/in-flight.ts';
import { jsonNewlinePlugin } from './http/json-newline.ts';
import { rateLimitPlugin } from './protection/limits.ts';
import { clientNamesPlugin } from './observability/client-names.ts';
import { metricsPlugin, type GatewayMetrics } from './observability/metrics.ts';
import { operationResolutionPlugin } from './operation-resolution.ts';
import { overloadPlugin } from './protection/overload.ts';
import { foregroundPlugin } from './protection/foreground.ts';
import { problemAnswersPlugin } from './http/problem-answers.ts';
import { requestIdPlugin } from './http/request-id.ts';
import { restRoutes } from './rest/index.ts';
import { openApiRoutePlugin } from './rest/openapi-route.ts';
import { areaPagesPlugin } from './pages/index.ts';
import { securityHeadersPlugin } from './http/security-headers.ts';
import { subscriptionsPlugin } from './subscriptions/index.ts';
import type { HistoryReader } from './subscriptions/history-access.ts';
import type { GatewayContext } from './supergraph.ts';

/** What exists once the Apollo Server made of every feature's Apollo plugins has started. */
export interface Started {
  apollo: ApolloServer<GatewayContext>;
  /** Plans a query ahead of its first execution (IncrementalGateway.plan). */
  plan: (query: string, operationName?: string) => Promise<void>;
}

/** Options a feature can only have once the GraphQL server has started. */
class AfterStart<O> {
  readonly options: (started: Started) => O;
  constructor(options: (started: Started) => O) { this.options = options; }
}

const afterStart = <O>(options: (started: Started) => O) => new AfterStart(options);

/**
 * One named part of the gateway: a Fastify plugin with its options, registered on the root
 * instance in list order, and the Apollo Server plugins it contributes, in list order too.
 */
export interface GatewayFeature {
  readonly name: string;
  /** Absent for a feature that only adds Apollo plugins. */
  readonly register?: (app: FastifyInstance, started: Started) => Promise<unknown>;
  readonly apollo: ApolloPlugins;
}

type Plugin<O extends FastifyPluginOptions> = FastifyPluginAsync<O> | FastifyPluginCallback<O>;

type ApolloPlugins = readonly ApolloServerPlugin<GatewayContext>[];

function feature<O extends FastifyPluginOptions>(
  name: string, plugin: Plugin<O>, options: O | AfterStart<O>, apollo: ApolloPlugins = [],
): GatewayFeature {
  const register = async (app: FastifyInstance, started: Started) =>
    app.register(plugin, options instanceof AfterStart ? options.options(started) : options);
  return { name, register, apollo };
}

const apolloOnly = (name: string, apollo: ApolloPlugins): GatewayFeature => ({ name, apollo });

/**
 * A plugin written for any context serves the gateway's; Apollo's types are invariant in the
 * context, and graphql-armor's plugins are typed against its own copy of @apollo/server.
 */
const forGatewayContext = (plugins: readonly unknown[]) => plugins as ApolloServerPlugin<GatewayContext>[];

/** What the features are made of, built by app.ts before any is registered. */
export interface GatewayParts {
  app: FastifyInstance;
  config: Config;
  db: Database;
  revocation: RevocationCheck;
  localSubgraphs?: readonly Subgraph[];
  publicAnswers?: PublicAnswers;
  reservationUnopenedMs?: number;
  bus: EventBus;
  history?: HistoryReader;
  supergraphSdl: string;
  limits: ReturnType<typeof graphqlLimits>;
  bounds: readonly RestInFlightBound[];
  probes: Record<string, () => Promise<boolean>>;
  metrics: GatewayMetrics;
  collapsing?: RequestCollapsing;
  /** Automatic persisted queries' documents, by hash (Apollo Server's cache). */
  apqDocument: DocumentByHash;
  clients: ClientStore;
  issuers: IssuerStore;
  trustedIssuers: TrustedIssuers;
  privateKey: TokenDeps['privateKey'];
  verify: TokenVerifier;
  gate: ReturnType<typeof createTokenGate>;
  idempotency: IdempotencyStore;
  documentStore: TrustedDocumentStore;
  /** Trusted documents as this process applies them (gateway/trusted/registry.ts). */
  trusted: TrustedDocuments;
}

/** How often expired Idempotency-Keys are deleted. */
const IDEMPOTENCY_PURGE_EVERY_MS = 10 * 60 * 1000;

/**
 * The gateway, in the order it runs. Fastify runs a hook of one kind in the order it was added, and
 * a route gets the hooks, parsers and handlers its scope has when the route is added; Apollo Server
 * runs its plugins' hooks in list order. Hence:
 * - json-newline's onSend comes before every other onSend hook, so the Idempotency-Key store keeps,
 *   and replays, the bytes that were sent;
 * - security-headers comes before any route and any refusal (overload, CORS, CSRF, limits), so that
 *   every answer has them;
 * - overload sheds load before any other work is done, and bounded-json replaces the JSON parser
 *   before any route scope;
 * - problem-answers sets the not-found and error handlers before any route scope: scopes inherit the
 *   handlers present when they are created;
 * - metrics comes before the pages so that their answers are counted;
 * - rest-in-flight refuses a REST path of a bounded field once none is free, before the token gate,
 *   the rate limit and the GraphQL pipeline (the cheapest answer a flood can get); it comes after the
 *   pages, whose paths may share the REST prefix;
 * - rate-limit decorates the root with the shared counters (Redis) that client-names, token-endpoints and
 *   subscriptions count in, and subscriptions decorates it with the transports' handlers that
 *   gated-routes mounts on /graphql;
 * - token-endpoints registers multipart parsing on the root, for every route after it;
 * - gated-routes is the one scope behind the token gate (GraphQL, REST, admin); inside it the nesting
 *   bound comes before the Idempotency-Key plugin, which parses the document; the token endpoints,
 *   the pages and the probes stay outside it.
 */
export function gatewayFeatures(parts: GatewayParts): GatewayFeature[] {
  const { app, config, metrics, limits, bounds, collapsing, apqDocument } = parts;
  return [
    feature('json-newline', jsonNewlinePlugin, {}),
    feature('request-id', requestIdPlugin, {}),
    feature('security-headers', securityHeadersPlugin, {}),
    feature('overload', overloadPlugin, { config }),
    feature('foreground', foregroundPlugin, {}),
    feature('bounded-json', boundedJsonPlugin, { maxDepth: config.JSON_MAX_DEPTH }),
    feature('form-bodies', formbody, {}),
    feature('browser-access', browserAccessPlugin, { config }),
    feature('problem-answers', problemAnswersPlugin, {}),
    // A worker's own numbers are a part that changes with each scrape: with WORKERS>1 only METRICS_PORT serves
    // them, added up.
    feature('metrics', metricsPlugin, { metrics, route: !config.METRICS_PORT && config.WORKERS === 1 }),
    feature('ide', idePlugin, {
      trustedIssuers: parts.trustedIssuers, policy: { allowLoopback: config.OIDC_ALLOW_LOOPBACK },
    }),
    feature('docs', docsPlugin, {}),
    feature('area-pages', areaPagesPlugin, { config }),
    feature('home', homePlugin, {}),
    apolloOnly('graphql-server', [fastifyApolloDrainPlugin(app), ApolloServerPluginLandingPageDisabled()]),
    apolloOnly('operation-resolution', forGatewayContext([operationResolutionPlugin])),
    apolloOnly('defer-limits', forGatewayContext([deferLimitsPlugin(limits.directives, config.GRAPHQL_MAX_DEFERRED)])),
    apolloOnly('subscriptions-elsewhere', forGatewayContext([subscriptionsElsewherePlugin])),
    feature('rest-in-flight', restInFlightPlugin, { bounds }, forGatewayContext(bounds.map((b) => b.bound.plugin))),
    apolloOnly('graphql-limits', forGatewayContext(limits.plugins)),
    apolloOnly('graphql-metrics', [metrics.apolloPlugin<GatewayContext>()]),
    ...(collapsing ? [apolloOnly('request-collapsing', [collapsing.plugin])] : []),
    feature('rate-limit', rateLimitPlugin, { config }),
    feature('client-names', clientNamesPlugin, { metrics, config }),
    feature('token-endpoints', tokenEndpointsPlugin, { config, clients: parts.clients, privateKey: parts.privateKey }),
    feature('subscriptions', subscriptionsPlugin, afterStart(({ apollo, plan }) => ({
      config, apollo, plan, supergraphSdl: parts.supergraphSdl, limits, verify: parts.verify, metrics,
      bus: parts.bus, history: parts.history,
      reservationUnopenedMs: parts.reservationUnopenedMs, trusted: parts.trusted,
    }))),
    feature('gated-routes', gatedRoutes, afterStart(({ apollo }) => ({
      config, apollo, gate: parts.gate, parseOptions: limits.parseOptions, collapsing,
      idempotency: {
        store: parts.idempotency, documentByHash: apqDocument, purgeEveryMs: IDEMPOTENCY_PURGE_EVERY_MS,
        count: (outcome) => metrics.idempotency.inc({ outcome }),
      },
      clients: parts.clients, issuers: parts.issuers, trustedIssuers: parts.trustedIssuers, revocation: parts.revocation,
      publicAnswers: parts.publicAnswers,
      documents: {
        store: parts.documentStore, trusted: parts.trusted, clients: parts.clients, issuers: parts.issuers, parseOptions: limits.parseOptions,
      },
    }))),
    feature('openapi', openApiRoutePlugin, { routes: restRoutes }),
    feature('health', healthPlugin, { db: parts.db, probes: parts.probes, localSubgraphs: parts.localSubgraphs }),
  ];
}
