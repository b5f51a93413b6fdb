import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageDisabled } from '@apollo/server/plugin/disabled';
import { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { parse } from 'graphql';
import type { Config } from '../subgraphs/platform/config.ts';
import type { Database } from '../subgraphs/platform/db/orm.ts';
import type { Subgraph } from '../subgraphs/platform/subgraph.ts';
import { loadSigningKeys } from '../subgraphs/platform/auth/keys.ts';
import { AppError, statusForCode } from '../subgraphs/platform/errors.ts';
import { boundedJsonParser, boundGraphqlNesting } from '../subgraphs/platform/nesting-http.ts';
import { cachedTokenVerifier, type Caller } from '../subgraphs/platform/auth/tokens.ts';
import type { RevocationCheck } from '../subgraphs/platform/auth/revocation.ts';
import { loggerOptions, RequestLogController, requestIdFrom, REQUEST_ID_HEADER } from '../subgraphs/platform/log.ts';
import { endJsonWithNewline } from './json-newline.ts';
import { ClientStore } from './auth/clients.ts';
import { registerTokenRoute } from './auth/token-route.ts';
import { registerRoadsideRoutes } from './auth/roadside-token-route.ts';
import { createTokenGate } from './auth/token-gate.ts';
import { addRequestRateLimit, registerRateLimitPlugin, tokenAttemptLimiter } from './limits.ts';
import { graphqlLimits } from '../subgraphs/platform/graphql-limits.ts';
import { restRoutes } from './rest/index.ts';
import { subgraphDefinitions } from '../subgraphs/index.ts';
import { buildOpenApi } from './rest/openapi.ts';
import { problem, problemFromErrors, sendProblem } from './rest/problem.ts';
import { registerRestRoutes, type OperationResult } from './rest/register.ts';
import { createGateway, readSupergraphSdl, subgraphProbes, type GatewayContext } from './supergraph.ts';
import { docsPlugin } from './docs/index.ts';
import { mapViewPlugin } from './map/index.ts';
import { homePlugin } from './home.ts';
import { idempotencyPlugin } from './idempotency/plugin.ts';
import { IdempotencyStore, loadResponseVault } from './idempotency/store.ts';
import { registerAdminClientRoutes } from './admin/clients-routes.ts';
import { idePlugin } from './ide/index.ts';
import { API_FALLBACK_HEADERS, securityHeadersPlugin } from './security-headers.ts';
import { clientErrorHandler } from './client-error.ts';
import { browserAccessPlugin } from './browser-access.ts';
import { answersInGraphqlShape, sendGraphqlErrors } from './graphql-reply.ts';
import { operationResolutionPlugin } from './operation-resolution.ts';
import { inFlightBound } from './in-flight.ts';
import { registerOverloadProtection } from './overload.ts';
import { ServiceUnavailable } from './unavailable.ts';
import { GatewayMetrics, metricsPlugin } from './observability/metrics.ts';
import { subscriptionsElsewherePlugin } from '../subgraphs/platform/subscriptions-elsewhere.ts';
import { startSubscriptions } from './subscriptions/index.ts';
import { graphqlHandler } from './collapse/graphql-handler.ts';
import { requestCollapsing } from './collapse/requests.ts';
import { SSE_PATH } from './subscriptions/sse.ts';
import { originAllowed } from './subscriptions/ws.ts';
import type { PublicAnswers } from '../subgraphs/platform/public-answers.ts';

export interface GatewayOptions {
  config: Config;
  /** The gateway's own database (API clients). */
  db: Database;
  /** Client revocation, shared with the in-process subgraphs. */
  revocation: RevocationCheck;
  /** GraphQL URL of each subgraph, by name. */
  subgraphUrls: Record<string, string>;
  /** Subgraphs built in this process that the gateway executes without HTTP (SUBGRAPH_TRANSPORT=inprocess). */
  localSubgraphs?: readonly Subgraph[];
  /**
   * The answers of the subgraph whose answers are public and versioned (SubgraphDefinition.answers), when it runs
   * in this process (any transport): their version (REST ETags before evaluation) and cache use (metrics).
   */
  publicAnswers?: PublicAnswers;
  /** How long an SSE reservation waits for its stream to open (tests shorten it). */
  reservationUnopenedMs?: number;
}

export interface Gateway {
  app: FastifyInstance;
  clients: ClientStore;
  tokenGate: ReturnType<typeof createTokenGate>;
  idempotency: IdempotencyStore;
  metrics: GatewayMetrics;
  close(): Promise<void>;
}

/** How often expired Idempotency-Keys are deleted. */
const IDEMPOTENCY_PURGE_EVERY_MS = 10 * 60 * 1000;

const contextFrom = (request: FastifyRequest): GatewayContext => {
  const caller = (request as FastifyRequest & { caller?: Caller | null }).caller;
  return { authorization: request.headers.authorization, requestId: request.id, orgId: caller?.orgId, clientId: caller?.clientId };
};

/** Builds the gateway (GraphQL, REST compatibility paths, tokens, health) without listening. */
export async function buildGateway({ config, db, revocation, subgraphUrls, localSubgraphs, publicAnswers, reservationUnopenedMs }: GatewayOptions): Promise<Gateway> {
  const app = Fastify({
    logger: loggerOptions(config, 'gateway'),
    logController: new RequestLogController(),
    genReqId: (req) => requestIdFrom(req.headers[REQUEST_ID_HEADER]),
    bodyLimit: 1024 * 1024,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    // Malformed URLs and over-long path parameters are refused before routing: answer them as problems too.
    clientErrorHandler,
    frameworkErrors: (error, _request, reply) => sendProblem(reply.headers(API_FALLBACK_HEADERS), problem((error as { statusCode?: number }).statusCode ?? 400, 'BAD_USER_INPUT', error.message)),
  });
  app.addHook('onSend', endJsonWithNewline);
  app.addHook('onSend', async (request, reply) => { reply.header(REQUEST_ID_HEADER, request.id); });
  await app.register(securityHeadersPlugin);
  await registerOverloadProtection(app, config);
  boundedJsonParser(app, config.JSON_MAX_DEPTH);
  await app.register(formbody);
  await app.register(browserAccessPlugin, { config });

  // Set before any route scope is registered: scopes inherit the handlers present when they are created.
  app.setNotFoundHandler((request, reply) => sendProblem(reply, problem(404, 'NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`)));
  app.setErrorHandler((error: Error & { statusCode?: number; code?: string; validation?: unknown }, request, reply) => {
    if (error instanceof ServiceUnavailable) {
      reply.header('retry-after', String(error.retryAfter));
      return sendProblem(reply, problem(503, error.code, error.message));
    }
    // Refused before a route ran (a body nested too deep): answered in the endpoint's own shape.
    if (error instanceof AppError) {
      return answersInGraphqlShape(request)
        ? sendGraphqlErrors(request, reply, statusForCode(error.code), [error.toJSON()])
        : sendProblem(reply, problemFromErrors([error.toJSON()]));
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) {
      request.log.error({ err: { type: error.name, message: error.message, stack: error.stack } }, 'unhandled error');
      return sendProblem(reply, problem(500, 'INTERNAL_SERVER_ERROR', 'Internal server error'));
    }
    const code = status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : status === 429 ? 'RATE_LIMITED' : 'BAD_USER_INPUT';
    return sendProblem(reply, problem(status, code, error.message));
  });

  const probes = subgraphProbes(subgraphUrls, localSubgraphs);
  const metrics = new GatewayMetrics({ probes, db, riskAnswers: publicAnswers?.stats });
  // A worker's own numbers are a part that changes with each scrape: with WORKERS>1 only METRICS_PORT serves them, added up.
  await app.register(metricsPlugin, { metrics, route: !config.METRICS_PORT && config.WORKERS === 1 });
  await app.register(idePlugin);
  await app.register(docsPlugin);
  await app.register(mapViewPlugin, { config });
  await app.register(homePlugin);
  const supergraphSdl = readSupergraphSdl();
  const limits = graphqlLimits(config, parse(supergraphSdl));
  const bounds = Object.values(subgraphDefinitions).flatMap(({ inFlight }) => (inFlight
    ? [{ ...inFlight, bound: inFlightBound({ ...inFlight, max: inFlight.max(config) }) }] : []));
  // A REST path of a bounded field asks for one evaluation: with none free it is refused before the token
  // gate, the rate limit and the GraphQL pipeline, the cheapest answer a flood can get. A
  // revalidation (If-None-Match) may be a 304 that needs none: the bound's plugin refuses it otherwise.
  app.addHook('onRequest', async (request) => {
    if (request.headers['if-none-match'] !== undefined) return;
    const full = bounds.find(({ restPrefix, bound }) => request.routeOptions.url?.startsWith(`${restPrefix}/`) && bound.full());
    if (full) throw new ServiceUnavailable(full.bound.busy, full.retryAfterSeconds);
  });
  // Apollo Server keeps the texts of automatic persisted queries in its cache under `apq:` (its APQ_CACHE_PREFIX).
  const apqDocument = async (hash: string): Promise<string | undefined> => apollo.cache.get(`apq:${hash}`);
  const collapsing = config.REQUEST_COLLAPSING
    ? requestCollapsing({ parseOptions: limits.parseOptions, documentByHash: apqDocument, count: (kind) => metrics.collapsed.inc({ kind }) })
    : undefined;
  const apollo = new ApolloServer<GatewayContext>({
    gateway: createGateway(subgraphUrls, { local: localSubgraphs, timeoutMs: config.SUBGRAPH_TIMEOUT_MS, hopKey: config.INTERNAL_HOP_KEY }, supergraphSdl),
    introspection: config.GRAPHQL_INTROSPECTION,
    includeStacktraceInErrorResponses: false,
    allowBatchedHttpRequests: false,
    // Replaced by gateway/browser-access.ts, which lets GET queries through.
    csrfPrevention: false,
    // Our shutdown (onShutdown) stops it; its own SIGTERM handler re-sends the signal once stopped, killing the process mid-shutdown.
    stopOnTerminationSignals: false,
    validationRules: limits.validationRules,
    parseOptions: limits.parseOptions,
    plugins: [fastifyApolloDrainPlugin(app), ApolloServerPluginLandingPageDisabled(), operationResolutionPlugin as ApolloServerPlugin<GatewayContext>, subscriptionsElsewherePlugin as ApolloServerPlugin<GatewayContext>,
      ...bounds.map(({ bound }) => bound.plugin as ApolloServerPlugin<GatewayContext>), ...(limits.plugins as unknown as ApolloServerPlugin<GatewayContext>[]), metrics.apolloPlugin<GatewayContext>(),
      ...(collapsing ? [collapsing.plugin] : [])],
  });
  await apollo.start();

  const clients = new ClientStore(db.orm.em);
  const keys = await loadSigningKeys(config);
  const redis = await registerRateLimitPlugin(app, config);
  const tokenDeps = { clients, privateKey: keys.privateKey, issuer: config.JWT_ISSUER, limit: tokenAttemptLimiter(app, config, redis) };
  registerTokenRoute(app, tokenDeps);
  await registerRoadsideRoutes(app, tokenDeps);
  const verify = cachedTokenVerifier(keys.publicKey, config.JWT_ISSUER, revocation);
  const gate = createTokenGate(verify, revocation);
  const subscriptions = await startSubscriptions(app, { config, apollo, supergraphSdl, limits, verify, redis, metrics, reservationUnopenedMs });
  const idempotency = new IdempotencyStore(db.orm.em, await loadResponseVault(config));

  const executeOperation = async (query: string, variables: Record<string, unknown>, request: FastifyRequest): Promise<OperationResult> => {
    const response = await apollo.executeOperation({ query, variables }, { contextValue: contextFrom(request) });
    if (response.body.kind !== 'single') throw new Error('incremental delivery is not used by REST routes');
    return response.body.singleResult as OperationResult;
  };
  // A REST row's result is shared by the callers it collapsed: rows' `result` functions read it, never change it.
  const execute = collapsing
    ? async (query: string, variables: Record<string, unknown>, request: FastifyRequest) =>
      (await collapsing.run('rest', collapsing.restKey(query, variables, request), () => executeOperation(query, variables, request))).answer
    : executeOperation;
  // GraphQL and the REST paths sit behind the token gate; the token endpoints and probes do not.
  await app.register(async (api) => {
    api.addHook('onRequest', gate.hook((request, reply, error) => (answersInGraphqlShape(request)
      ? sendGraphqlErrors(request, reply, statusForCode(error.code), [{ message: error.message, extensions: { code: error.code } }])
      : sendProblem(reply, problemFromErrors([error.toJSON()])))));
    addRequestRateLimit(api, app);
    // Before the idempotency plugin, which parses the document.
    boundGraphqlNesting(api, '/graphql', config.JSON_MAX_DEPTH);
    await api.register(idempotencyPlugin, { store: idempotency, graphqlPath: '/graphql', parseOptions: limits.parseOptions, documentByHash: apqDocument, purgeEveryMs: IDEMPOTENCY_PURGE_EVERY_MS, count: (outcome) => metrics.idempotency.inc({ outcome }) });
    const context = async (request: FastifyRequest) => contextFrom(request);
    const handler = graphqlHandler(apollo, context, collapsing);
    api.route({ method: ['POST', 'OPTIONS'], url: '/graphql', handler });
    // GET /graphql: a query in the URL, or a WebSocket upgrade to graphql-ws (subscriptions).
    api.route({
      method: 'GET', url: '/graphql', handler, wsHandler: subscriptions.wsHandler,
      onRequest: async (request, reply) => {
        if (request.ws && !originAllowed(request, config.CORS_ORIGINS)) {
          return sendGraphqlErrors(request, reply, 403, [{ message: `Origin ${request.headers.origin} may not open a WebSocket here (CORS_ORIGINS)`, extensions: { code: 'FORBIDDEN' } }]);
        }
      },
    });
    api.route({ method: ['GET', 'POST', 'PUT', 'DELETE'], url: SSE_PATH, handler: subscriptions.sseHandler });
    registerRestRoutes(api, restRoutes, execute, { jsonMaxDepth: config.JSON_MAX_DEPTH, cacheVersion: publicAnswers?.version });
    registerAdminClientRoutes(api, clients, revocation);
  });

  const openapi = buildOpenApi(restRoutes);
  app.get('/openapi.json', async () => openapi);
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const checks: Record<string, boolean> = { database: await db.orm.isConnected().catch(() => false) };
    await Promise.all(Object.entries(probes).map(async ([name, probe]) => { checks[name] = await probe(); }));
    const ready = Object.values(checks).every(Boolean);
    const pending = Object.fromEntries((localSubgraphs ?? []).flatMap((s) => { const why = s.pending(); return why ? [[s.name, why]] : []; }));
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', checks, ...(Object.keys(pending).length ? { pending } : {}) });
  });

  return {
    app, clients, tokenGate: gate, idempotency, metrics,
    async close() {
      await app.close();
    },
  };
}
