import { ApolloServer } from '@apollo/server';
import Fastify, { type FastifyInstance } from 'fastify';
import { parse } from 'graphql';
import type { Config } from '../subgraphs/platform/config.ts';
import type { Database } from '../subgraphs/platform/db/orm.ts';
import type { Subgraph } from '../subgraphs/platform/subgraph.ts';
import { loadInternalSigningKey, loadSigningKeys } from '../subgraphs/platform/auth/keys.ts';
import { internalTokenMinter } from '../subgraphs/platform/auth/internal-token.ts';
import { cachedTokenVerifier } from './auth/token-gate.ts';
import type { RevocationCheck } from './auth/revocation.ts';
import { loggerOptions, RequestLogController, requestIdFrom, REQUEST_ID_HEADER } from '../subgraphs/platform/log.ts';
import { graphqlLimits } from '../subgraphs/platform/graphql-limits.ts';
import { ValidatedDocuments } from './validated-documents.ts';
import type { PublicAnswers } from '../subgraphs/platform/public-answers.ts';
import { subgraphDefinitions } from '../subgraphs/index.ts';
import { ClientStore } from './auth/clients.ts';
import { createTokenGate } from './auth/token-gate.ts';
import { callerVerifier } from './auth/callers.ts';
import { IssuerRegistration, IssuerStore } from './auth/issuers.ts';
import { TrustedIssuers } from './auth/oidc/trusted-issuers.ts';
import { userTokenVerifier } from './auth/oidc/user-tokens.ts';
import { clientErrorHandler } from './http/client-error.ts';
import { requestCollapsing } from './collapse/requests.ts';
import { gatewayFeatures } from './features.ts';
import { IdempotencyStore, loadResponseVault } from './idempotency/store.ts';
import { TrustedDocuments } from './trusted/registry.ts';
import { TrustedDocumentStore } from './trusted/store.ts';
import { inFlightBound } from './protection/in-flight.ts';
import { GatewayMetrics } from './observability/metrics.ts';
import { problem, sendProblem } from '../subgraphs/platform/rest/problem.ts';
import { API_FALLBACK_HEADERS } from './http/security-headers.ts';
import { createGateway, readSupergraphSdl, subgraphProbes, type GatewayContext } from './supergraph.ts';
import type { EventBus } from '../subgraphs/platform/events/bus.ts';
import type { HistoryReader } from './subscriptions/history-access.ts';

export interface GatewayOptions {
  config: Config;
  /** The gateway's own database (API clients). */
  db: Database;
  /** Client revocation (the gateway's alone: subgraphs trust its internal token). */
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
  /** The process's event bus: subscriptions take committed events from its live(). */
  bus: EventBus;
  /** The event history subscriptions resume from (`after`, `Last-Event-ID`); without it, none resumes. */
  history?: HistoryReader;
}

export interface Gateway {
  app: FastifyInstance;
  clients: ClientStore;
  issuers: IssuerStore;
  tokenGate: ReturnType<typeof createTokenGate>;
  idempotency: IdempotencyStore;
  metrics: GatewayMetrics;
  /** Trusted documents: the tables, and this process's view of them. */
  documentStore: TrustedDocumentStore;
  trusted: TrustedDocuments;
  close(): Promise<void>;
}

/** Builds the gateway (GraphQL, REST compatibility paths, tokens, health) without listening: gateway/features.ts in order. */
export async function buildGateway({
  config, db, revocation, subgraphUrls, localSubgraphs, publicAnswers, reservationUnopenedMs, bus, history,
}: GatewayOptions): Promise<Gateway> {
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

  const probes = subgraphProbes(subgraphUrls, localSubgraphs);
  const metrics = new GatewayMetrics({ probes, db, riskAnswers: publicAnswers?.stats });
  const supergraphSdl = readSupergraphSdl();
  const limits = graphqlLimits(config, parse(supergraphSdl));
  const bounds = Object.values(subgraphDefinitions).flatMap(({ inFlight }) => (inFlight
    ? [{ ...inFlight, bound: inFlightBound({ ...inFlight, max: inFlight.max(config) }) }] : []));
  // Apollo Server keeps the texts of automatic persisted queries in its cache under `apq:` (its APQ_CACHE_PREFIX).
  const apqDocument = async (hash: string): Promise<string | undefined> => apollo.cache.get(`apq:${hash}`);
  const collapsing = config.REQUEST_COLLAPSING
    ? requestCollapsing({ parseOptions: limits.parseOptions, documentByHash: apqDocument, count: (kind) => metrics.collapsed.inc({ kind }) })
    : undefined;
  const clients = new ClientStore(db.orm.em);
  const keys = await loadSigningKeys(config);
  const issuerPolicy = { allowLoopback: config.OIDC_ALLOW_LOOPBACK };
  const issuers = new IssuerStore(db.orm.em, issuerPolicy);
  const trustedIssuers = new TrustedIssuers(() => db.orm.em.fork().find(IssuerRegistration, {}));
  const verify = callerVerifier(config.JWT_ISSUER, cachedTokenVerifier(keys.publicKey, config.JWT_ISSUER, revocation),
    userTokenVerifier(trustedIssuers, issuerPolicy, app.log));
  const gate = createTokenGate(verify, revocation);
  const idempotency = new IdempotencyStore(db.orm.em, await loadResponseVault(config));
  const documentStore = new TrustedDocumentStore(db.orm.em);
  const trusted = new TrustedDocuments(documentStore, app.log);
  await trusted.start();
  app.addHook('onClose', async () => trusted.stop());
  const features = gatewayFeatures({
    app, config, db, revocation, localSubgraphs, publicAnswers, reservationUnopenedMs, bus, history,
    supergraphSdl, limits, bounds, probes, metrics,
    collapsing, apqDocument, clients, issuers, trustedIssuers, privateKey: keys.privateKey, verify, gate, idempotency, documentStore, trusted,
  });

  const gateway = createGateway(subgraphUrls, {
    mint: internalTokenMinter(await loadInternalSigningKey(config), config.JWT_ISSUER),
    local: localSubgraphs, timeoutMs: config.SUBGRAPH_TIMEOUT_MS, hopKey: config.INTERNAL_HOP_KEY,
    maxResponseObjects: config.GRAPHQL_MAX_RESPONSE_OBJECTS,
  }, supergraphSdl);
  const documents = new ValidatedDocuments({ ...limits, introspection: config.GRAPHQL_INTROSPECTION });
  gateway.onSchemaLoadOrUpdate(({ apiSchema }) => documents.schemaLoaded(apiSchema));
  const apollo = new ApolloServer<GatewayContext>({
    gateway,
    documentStore: documents,
    introspection: config.GRAPHQL_INTROSPECTION,
    includeStacktraceInErrorResponses: false,
    allowBatchedHttpRequests: false,
    // Replaced by gateway/http/browser-access.ts, which lets GET queries through.
    csrfPrevention: false,
    // Our shutdown (onShutdown) stops it; its own SIGTERM handler re-sends the signal once stopped, killing the process mid-shutdown.
    stopOnTerminationSignals: false,
    validationRules: limits.validationRules,
    parseOptions: limits.parseOptions,
    plugins: features.flatMap(({ apollo: plugins }) => plugins),
  });
  await apollo.start();
  // A query run later with no request to pay for it (a subscription's, on each event): validated and planned now.
  const plan = (query: string, operationName?: string) => gateway.plan(query, operationName, documents.prepare(query));
  for (const { register } of features) await register?.(app, { apollo, plan });

  return {
    app, clients, issuers, tokenGate: gate, idempotency, metrics, documentStore, trusted,
    async close() {
      await app.close();
    },
  };
}
