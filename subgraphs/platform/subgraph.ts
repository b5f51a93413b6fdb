import { readFileSync } from 'node:fs';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { entityIdResolvers } from './entity-id.ts';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import fastifyApollo, { fastifyApolloDrainPlugin } from '@as-integrations/fastify';
import type { EntityManager } from '@mikro-orm/core';
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyPluginAsync } from 'fastify';
import { parse, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import type { Config } from './config.ts';
import { createContext, type LoggerSource, type SubgraphContext } from './context.ts';
import { openDatabase, type Database, type Entity } from './db/orm.ts';
import { formatError } from './format-error.ts';
import { AppError, statusForCode } from './errors.ts';
import { boundedJsonParser, boundGraphqlNesting } from './nesting-http.ts';
import { guardResolvers, type ResolverMap } from './guard.ts';
import { loadInternalVerifyingKey } from './auth/keys.ts';
import { bearerToken, type Caller, type Scope } from './auth/tokens.ts';
import { internalTokenVerifier } from './auth/internal-token.ts';
import { loggerOptions, RequestLogController, requestIdFrom, REQUEST_ID_HEADER } from './log.ts';
import { scalarResolvers } from './scalars.ts';
import { nulGuard } from './nul-guard.ts';
import { listTurns } from './list-turns.ts';
import './field-arguments.ts';
import { requireInternalHop } from './internal-hop.ts';
import { graphqlLimits } from './graphql-limits.ts';
import { subscriptionsElsewherePlugin } from './subscriptions-elsewhere.ts';
import type { PublicAnswers } from './public-answers.ts';
import type { RestRoute, WebhookPayloadDoc } from './rest/types.ts';
import type { PageKit } from './page-kit.ts';
import type { EventBus } from './events/bus.ts';
import type { EventHistory } from './events/history.ts';
import { startRelay, type Relay } from './events/relay.ts';
import { WebhookOutbox } from './webhooks/outbox.ts';

export interface SubgraphDefinition<Loaders = unknown> {
  name: string;
  /** The SDL file, the subgraph's source of truth. */
  typeDefs: URL;
  resolvers: ResolverMap;
  entities: Entity[];
  migrationsPath: string;
  /** The token scope every entry point needs; null for a public subgraph. */
  scope: Scope | null;
  /**
   * Mutation fields whose answer carries a secret shown only there (a signing secret): the gateway
   * never keeps their answers for an Idempotency-Key, and a retry answers 409
   * IDEMPOTENT_SECRET_NOT_REPLAYED instead of running them again (on GraphQL and on REST rows that run them).
   */
  secretMutations?: readonly string[];
  createLoaders: (em: EntityManager, caller: Caller | null) => Loaders;
  /**
   * The area's documented REST paths (its `rest.ts`), served by the gateway wherever the area runs: rows and
   * their mapping only, importing no service, entity or database code.
   */
  rest?: readonly RestRoute[];
  /** Sentences the OpenAPI document's description adds after the gateway's, in registry order. */
  restIntro?: string;
  /** The webhook bodies it sends, by event type: the OpenAPI document's `webhooks` section. */
  webhookPayloads?: readonly WebhookPayloadDoc[];
  /**
   * Its HTML pages and the files they load, served by the gateway on its root instance wherever the area
   * runs (gateway/pages/), built with the page helpers the gateway hands over.
   */
  pages?: (kit: PageKit) => FastifyPluginAsync;
  /** A token endpoint of the area's own (its `token.ts`), served by the gateway with its client-credentials grant. */
  tokenEndpoint?: TokenEndpoint;
  /**
   * The largest file a multipart/form-data body of one of its REST paths may carry, in bytes: the gateway
   * parses such bodies (fields as strings, the file part as `{ filename, mimetype, base64 }`) on every path,
   * with the largest limit declared; a larger part is 413.
   */
  multipartFileBytes?: number;
  /** Its tabs in the GraphQL IDE (its `ide-examples.ts`), one named operation each. */
  examples?: readonly IdeExample[];
  /** Runs once after migrations (reference data, samples). */
  onStart?: (db: Database, config: Config, log: FastifyBaseLogger) => Promise<void>;
  /** Runs once when the subgraph closes, before its database (what onStart started: worker pools). */
  onClose?: (db: Database) => Promise<void>;
  /** A background worker, started once every subgraph of the process is built. */
  worker?: (context: WorkerContext) => Worker;
  /** Why the subgraph is not ready yet although its database is (data still loading), or null: /readyz answers 503 meanwhile. */
  pending?: (db: Database) => string | null;
  /** Its answers' version and cache, when they are public and versioned (the gateway's ETags and metrics). */
  answers?: (db: Database) => PublicAnswers;
  /**
   * A bound the gateway keeps, per process, on costly evaluations of one root query field
   * (gateway/protection/in-flight.ts), wherever the subgraph runs: past `max` running at once, answers are 503.
   */
  inFlight?: InFlightField;
  /** Reads of the event history it keeps, for subscriptions resumed `after` an event (the gateway's). */
  eventHistory?: EventHistory;
  /** Runs at install time (`npm install`'s postinstall): prepares what a first start would otherwise make; returns what it made. */
  prepare?: () => Promise<string>;
}

/** What the gateway's client-credentials grant gives an area's token endpoint to answer with. */
export interface TokenGrant { accessToken: string; scopes: Scope[]; clientId: string }

/**
 * A token endpoint in an area's own request and response shape. The gateway authenticates the client
 * (HTTP Basic or body credentials, grant_type in the query or the body), counts failed attempts and
 * answers refusals as RFC 6749 5.2 errors; the area says which scopes a token carries and how the
 * answer reads.
 */
export interface TokenEndpoint {
  path: string;
  /** The scopes a token carries when the client asks for none, from those it may have; null refuses (invalid_scope). */
  scopes(granted: Scope[]): Scope[] | null;
  /** The invalid_scope refusal's description. */
  refusal: string;
  /** The 200 body (sent with `cache-control: no-store`). */
  answer(grant: TokenGrant, lifetimeSeconds: number): Record<string, unknown>;
  /** Its OpenAPI operation's own parts; the gateway adds the tag, the refusals and the problem answers. */
  openapi: {
    operationId: string;
    summary: string;
    description: string;
    parameters?: readonly Record<string, unknown>[];
    requestBody: Record<string, unknown>;
    /** The 200 body's schema. */
    response: Record<string, unknown>;
    /** The 400 answer's description. */
    badRequest: string;
    /** Its OAuth 2.0 client-credentials security scheme: its name, what it says, the scopes it grants. */
    securityScheme: { name: string; description: string; scopes: Record<string, string> };
  };
}

/** An example operation, preloaded as a GraphQL IDE tab. */
export interface IdeExample {
  /** One named operation; the IDE titles the tab with its name. */
  query: string;
  variables?: Record<string, unknown>;
}

export interface InFlightField {
  /** The root query field, e.g. `riskIndex`; each occurrence (alias) takes a slot. */
  field: string;
  /** Named in the refusal, e.g. `Risk Index`. */
  label: string;
  max: (config: Config) => number;
  /** How soon a refused caller may retry. */
  retryAfterSeconds: number;
  /** The REST paths that each ask for one evaluation: with none free they are refused before any other work. */
  restPrefix: string;
  /** Paths under `restPrefix` that ask for no evaluation (batch jobs, run by the area's own worker): never refused by the bound. */
  restExempt?: readonly string[];
}

export interface WorkerContext {
  db: Database;
  config: Config;
  log: FastifyBaseLogger;
  /** The databases of the subgraphs built in this process (this one included), by name. */
  peers: Record<string, Database>;
  /** The process's event bus: a worker's durable consumers (bus.consume) take committed events from it. */
  bus: EventBus;
}

export interface Worker {
  /**
   * Resolves once the worker's durable consumers are registered (bus.consume resolved): the areas'
   * relays of the process start only then, so that the in-process bus hands no event over before them.
   */
  ready?: Promise<void>;
  stop(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the registry holds subgraphs whose loaders differ
export type AnySubgraphDefinition = SubgraphDefinition<any>;

export interface Subgraph {
  name: string;
  schema: GraphQLSchema;
  apollo: ApolloServer<SubgraphContext>;
  app: FastifyInstance;
  db: Database;
  /**
   * Builds a request context as the HTTP handler does, from `Bearer <the gateway's internal token>` (or
   * nothing: an anonymous caller); used for in-process execution.
   */
  context: (authorization: string | undefined, requestId: string, log: LoggerSource) => Promise<SubgraphContext>;
  /** Why it is not ready yet although its database is, or null (SubgraphDefinition.pending). */
  pending(): string | null;
  /** SubgraphDefinition.answers, when it has them. */
  answers?: PublicAnswers;
  /** Starts the definition's background worker, if it has one, resolving once it is ready (Worker.ready); close() stops it. */
  startWorker(peers: Record<string, Database>, bus: EventBus): Promise<void>;
  /**
   * Starts the relay of its outbox to `bus`, if it records events (its entities hold the outbox); close()
   * stops it. Call it after every worker of the process is ready.
   */
  startRelay(bus: EventBus): void;
  close(): Promise<void>;
}

export const readTypeDefs = (url: URL) => parse(readFileSync(url, 'utf8'));

/**
 * Apollo Server's cache control computes a hint for every resolved field (and wraps every field's
 * resolver, for in-process execution too, once the schema served one HTTP request) only to answer
 * `no-store`: no subgraph declares a hint. This answers it without the per-field work.
 */
const noStore: ApolloServerPlugin<SubgraphContext> = {
  async requestDidStart() {
    return { async willSendResponse({ response }) { response.http.headers.set('cache-control', 'no-store'); } };
  },
};

/** Builds the federated schema: SDL + scalars it declares + guarded resolvers + entity ids; big lists on turns of their own. */
export function buildSchema(definition: SubgraphDefinition, typeDefs = readTypeDefs(definition.typeDefs)): GraphQLSchema {
  const declared = new Set(typeDefs.definitions.flatMap((d) => (d.kind === 'ScalarTypeDefinition' ? [d.name.value] : [])));
  const scalars = Object.fromEntries(Object.entries(scalarResolvers).filter(([name]) => declared.has(name)));
  const resolvers = { ...scalars, ...guardResolvers(definition.resolvers, definition.scope) } as GraphQLResolverMap<unknown>;
  for (const [type, id] of Object.entries(entityIdResolvers(typeDefs))) resolvers[type] = { ...id, ...resolvers[type] as object };
  return listTurns(buildSubgraphSchema({ typeDefs, resolvers }));
}

/**
 * One way to build every subgraph: database, schema, Apollo Server and its HTTP app (not listening). Who
 * calls comes in the gateway's internal token only (auth/internal-token.ts): over HTTP, an Authorization
 * header that is not a valid one for this subgraph (a client's own access token among them) is 401.
 */
export async function buildSubgraph<L>(definition: SubgraphDefinition<L>, config: Config): Promise<Subgraph> {
  if (!config.INTERNAL_HOP_KEY) throw new Error(`INTERNAL_HOP_KEY is required: subgraph ${definition.name} accepts requests from the gateway only, signed with that shared key`);
  const app = Fastify({
    logger: loggerOptions(config, `subgraph-${definition.name}`),
    logController: new RequestLogController(),
    genReqId: (req) => requestIdFrom(req.headers[REQUEST_ID_HEADER]),
    bodyLimit: 2 * 1024 * 1024,
  });
  boundedJsonParser(app, config.JSON_MAX_DEPTH);
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof AppError) return reply.code(statusForCode(error.code)).send({ errors: [error.toJSON()] });
    throw error;
  });
  const db = await openDatabase(config, { name: definition.name, entities: definition.entities, migrationsPath: definition.migrationsPath });
  try {
    await definition.onStart?.(db, config, app.log);
    const verifyingKey = await loadInternalVerifyingKey(config);
    const verify = internalTokenVerifier(verifyingKey, config.JWT_ISSUER, definition.name, config.INTERNAL_HOP_MAX_SKEW_SECONDS);
    const typeDefs = readTypeDefs(definition.typeDefs);
    const schema = buildSchema(definition as SubgraphDefinition, typeDefs);
    requireInternalHop(app, config.INTERNAL_HOP_KEY, config.INTERNAL_HOP_MAX_SKEW_SECONDS);
    // After the hop's checks; the error handler answers the AppError (401). The context's verify is then a cache hit.
    app.addHook('preHandler', async (request) => {
      const token = bearerToken(request.headers.authorization);
      if (token) await verify(token);
    });
    boundGraphqlNesting(app, '/graphql', config.JSON_MAX_DEPTH);
    // The gateway's limits again: a request that reaches this port directly gets no more.
    const limits = graphqlLimits(config, typeDefs);
    const deps = { em: db.orm.em, verify, createLoaders: definition.createLoaders };
    const context = (authorization: string | undefined, requestId: string, log: LoggerSource) =>
      createContext(deps, authorization, requestId, log) as Promise<SubgraphContext>;

    const apollo = new ApolloServer<SubgraphContext>({
      schema,
      introspection: true,
      includeStacktraceInErrorResponses: false,
      formatError: (formatted: GraphQLFormattedError, error: unknown) => formatError(formatted, error, app.log),
      allowBatchedHttpRequests: false,
      // Our shutdown (onShutdown) stops it; its own SIGTERM handler re-sends the signal once stopped, killing the process mid-shutdown.
      stopOnTerminationSignals: false,
      validationRules: limits.validationRules,
      parseOptions: limits.parseOptions,
      plugins: [fastifyApolloDrainPlugin(app), ApolloServerPluginInlineTraceDisabled(), ApolloServerPluginCacheControlDisabled(), noStore, nulGuard, subscriptionsElsewherePlugin as ApolloServerPlugin<SubgraphContext>, ...(limits.plugins as unknown as ApolloServerPlugin<SubgraphContext>[])],
    });
    await apollo.start();
    await app.register(fastifyApollo(apollo), {
      path: '/graphql',
      context: async (request) => context(request.headers.authorization, request.id, request.log),
    });
    app.get('/healthz', async () => ({ status: 'ok' }));
    const pending = () => definition.pending?.(db) ?? null;
    app.get('/readyz', async (_req, reply) => {
      const ok = await db.orm.isConnected().catch(() => false);
      const waiting = pending();
      const ready = ok && !waiting;
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ok' : 'unavailable', database: ok, ...(waiting ? { pending: waiting } : {}) });
    });
    let worker: Worker | undefined;
    let relay: Relay | undefined;
    return {
      name: definition.name, schema, apollo, app, db, context, pending, answers: definition.answers?.(db),
      async startWorker(peers, bus) {
        worker ??= definition.worker?.({ db, config, log: app.log, peers, bus });
        await worker?.ready;
      },
      startRelay(bus) {
        if (!definition.entities.includes(WebhookOutbox)) return;
        relay ??= startRelay({
          name: definition.name, db, bus, log: app.log, pollMs: config.EVENTS_RELAY_POLL_MS, shared: !!config.DATABASE_URL,
        });
      },
      async close() {
        // Side by side: a relay's publish may wait for an in-process consumer that the worker's stop ends.
        await Promise.all([relay?.stop(), worker?.stop()]);
        await app.close();
        await apollo.stop().catch(() => undefined);
        await definition.onClose?.(db);
        await db.close();
      },
    };
  } catch (error) {
    await definition.onClose?.(db).catch(() => undefined);
    await db.close();
    throw error;
  }
}
