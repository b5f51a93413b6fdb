import { randomUUID } from 'node:crypto';
import type { ApolloServer } from '@apollo/server';
import websocket from '@fastify/websocket';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { handleProtocols } from 'graphql-ws';
import type { ValidationRule } from 'graphql';
import { parse } from 'graphql';
import { OperationTypes } from '../collapse/collapser.ts';
import type { Config } from '../../subgraphs/platform/config.ts';
import type { TokenVerifier } from '../auth/token-gate.ts';
import { REVOCATION_CACHE_MS } from '../auth/revocation.ts';
import { costDirectivesOf } from '../../subgraphs/platform/cost/directives.ts';
import type { EventBus } from '../../subgraphs/platform/events/bus.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { GatewayContext } from '../supergraph.ts';
import type { TrustedDocuments } from '../trusted/registry.ts';
import { subscriberAuth, type Subscriber } from './auth.ts';
import { executionBudget } from './budget.ts';
import { memoryClientLimit, redisClientLimit } from './client-limit.ts';
import { ExecutionSlots } from './execution-slots.ts';
import { apiSchemaOf, asSubscriptionResult, type PreparedSubscription, type SubscriptionRules } from './document.ts';
import { SubscriptionEngine } from './engine.ts';
import type { HistoryReader } from './history-access.ts';
import { EventReplay } from './replay.ts';
import { acceptsMultipartSubscription, multipartHandler } from './multipart.ts';
import { sseHandler } from './sse.ts';
import { webSocketHandler } from './ws.ts';

/** Events waiting for one subscriber (not yet run, or not yet sent) past which it is dropped as a slow consumer. */
export const SUBSCRIPTION_QUEUE_MAX = 100;
/** Unsent bytes on one WebSocket past which its subscriber is dropped as a slow consumer. */
export const SUBSCRIPTION_BUFFER_MAX = 4 * 1024 * 1024;
/** Subscription executions in flight at once in one process (each on an event-loop turn of its own). */
export const SUBSCRIPTION_EXECUTIONS_IN_FLIGHT = 2;
/** The event loop's busy time subscription executions may take back to back: each is followed by as long a rest (execution-slots.ts). */
export const SUBSCRIPTION_EXECUTION_SHARE = 0.5;
/** A graphql-ws message is a small JSON document. */
const WS_MAX_PAYLOAD = 256 * 1024;

export interface SubscriptionOptions {
  config: Config;
  apollo: ApolloServer<GatewayContext>;
  /** Plans a subscription's query when it starts (the gateway's plan cache), not on its first event. */
  plan: (query: string, operationName?: string) => Promise<void>;
  supergraphSdl: string;
  limits: { validationRules: readonly unknown[]; parseOptions: { maxTokens: number } };
  verify: TokenVerifier;
  metrics: GatewayMetrics;
  /** The process's event bus (opened and closed by its owner, gateway/stack.ts): committed events come from its live(). */
  bus: EventBus;
  /** How long an SSE reservation waits for its stream to open (tests shorten it; default RESERVATION_UNOPENED_MS). */
  reservationUnopenedMs?: number;
  trusted: TrustedDocuments;
  /** The event history subscriptions resume from (gateway/stack.ts opens it); without it, none resumes. */
  history?: HistoryReader;
}

/**
 * The gateway's subscription layer (see docs/subscriptions.md): committed events from the bus, the
 * engine that runs each subscription's query per event through `apollo` with the subscriber's token,
 * and the two transports. Registers @fastify/websocket on `app` (before the routes that take
 * `wsHandler`); on close, every subscription ends with 1001 before the server stops. Counts each
 * client's subscriptions in `sharedCounters` (Redis) when the gateway has them.
 */
async function startSubscriptions(app: FastifyInstance, options: SubscriptionOptions) {
  const { config, apollo, supergraphSdl, limits, verify, metrics, bus } = options;
  const redis = app.sharedCounters;
  const rules: SubscriptionRules = {
    schema: apiSchemaOf(supergraphSdl),
    validationRules: limits.validationRules as ValidationRule[],
    parseOptions: limits.parseOptions,
    directives: costDirectivesOf(parse(supergraphSdl)),
    // Paid on every event: SUBSCRIPTIONS_MAX_COST, and never more than a query may cost.
    maxCost: Math.min(config.SUBSCRIPTIONS_MAX_COST, config.GRAPHQL_MAX_COST),
  };
  // The subscriber's token was checked (revocation included) before this event and on a timer: the subgraphs get the caller.
  const execute = async (prepared: PreparedSubscription, { caller }: Subscriber) => {
    const { query, variables, operationName } = prepared;
    const contextValue: GatewayContext = { caller, requestId: randomUUID(), transport: 'subscription', clientId: caller.clientId };
    const response = await apollo.executeOperation({ query, variables, operationName }, { contextValue });
    if (response.body.kind !== 'single') throw new Error('incremental delivery is not used by subscriptions');
    return asSubscriptionResult(prepared, response.body.singleResult);
  };
  const clientLimit = (max: number, counted: 'subscriptions' | 'connections') => (redis
    ? redisClientLimit(redis, config.REDIS_KEY_PREFIX, max, app.log, counted)
    : memoryClientLimit(max));
  const max = config.SUBSCRIPTIONS_MAX_PER_CLIENT;
  const sharing = config.SUBSCRIPTIONS_FAN_OUT === 'shared';
  const perMinute = config.SUBSCRIPTIONS_EXECUTIONS_PER_MINUTE;
  const engine = new SubscriptionEngine({
    live: (listener) => bus.live(listener), execute, auth: subscriberAuth(verify),
    plan: ({ query, operationName }) => options.plan(query, operationName),
    replay: new EventReplay(options.history),
    clientLimit: clientLimit(max, 'subscriptions'),
    maxPerClient: max, maxPerProcess: config.SUBSCRIPTIONS_MAX_PER_PROCESS,
    queueMax: SUBSCRIPTION_QUEUE_MAX, bufferMax: SUBSCRIPTION_BUFFER_MAX,
    // Half the revocation cache: a disable elsewhere closes subscriptions within about 1.5 of it.
    recheckEveryMs: REVOCATION_CACHE_MS / 2,
    budget: executionBudget(perMinute, redis && { redis, keyPrefix: config.REDIS_KEY_PREFIX }),
    sharing, slots: sharing ? new ExecutionSlots(SUBSCRIPTION_EXECUTIONS_IN_FLIGHT, true, SUBSCRIPTION_EXECUTION_SHARE) : new ExecutionSlots(Infinity, false),
    metrics: {
      active: metrics.subscriptionsActive, pushed: metrics.subscriptionEvents, closed: metrics.subscriptionsClosed,
      executions: metrics.subscriptionExecutions,
    },
    log: app.log,
  });
  const sse = sseHandler(engine, rules, {
    reservationsPerClient: config.SSE_RESERVATIONS_MAX_PER_CLIENT, reservationUnopenedMs: options.reservationUnopenedMs, trusted: options.trusted,
  });
  const ws = webSocketHandler(engine, rules, {
    clientConnections: clientLimit(config.SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT, 'connections'),
    maxPerClient: config.SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT,
    maxPerProcess: config.SUBSCRIPTIONS_MAX_CONNECTIONS_PER_PROCESS,
    idleCloseMs: config.SUBSCRIPTIONS_IDLE_CLOSE_MS, keepAliveMs: config.SUBSCRIPTIONS_KEEPALIVE_MS,
    closed: metrics.subscriptionsClosed, log: app.log, trusted: options.trusted,
  });
  /** Sockets whose error was logged: `ws` may report more than one while closing. */
  const failed = new WeakSet<object>();
  await app.register(websocket, {
    options: { maxPayload: WS_MAX_PAYLOAD, handleProtocols },
    // One JSON line per connection (an oversized message, a reset); `ws` closes the socket after a refused frame.
    errorHandler(error, socket, request) {
      if (failed.has(socket)) return;
      failed.add(socket);
      const { code } = error as NodeJS.ErrnoException;
      request.log.warn({ error: { type: error.name, message: error.message, code } }, 'WebSocket error: connection closed');
      if (socket.readyState === socket.OPEN) socket.terminate();
    },
    // Before the server stops taking connections: subscriptions end with 1001, and so do connections not initialised yet.
    async preClose() {
      await engine.shutdown();
      ws.shutdown();
      await sse.drain();
    },
  });
  const multipart = multipartHandler(engine, rules);
  const operationTypes = new OperationTypes(limits.parseOptions);
  const wantsMultipart = (request: FastifyRequest) => {
    const { query, operationName } = (request.body ?? {}) as { query?: unknown; operationName?: unknown };
    return typeof query === 'string' && acceptsMultipartSubscription(request)
      && operationTypes.of(query, typeof operationName === 'string' ? operationName : undefined) === 'subscription';
  };
  app.decorate('subscriptions', { wsHandler: ws.handler, sseHandler: sse.handle, multipartHandler: multipart, wantsMultipart });
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The handlers of the two subscription transports, set by subscriptionsPlugin, for the GraphQL routes. */
    subscriptions: {
      wsHandler: ReturnType<typeof webSocketHandler>['handler'];
      sseHandler: ReturnType<typeof sseHandler>['handle'];
      /** Apollo's multipart subscription protocol on POST /graphql. */
      multipartHandler: ReturnType<typeof multipartHandler>;
      /** A POST /graphql that asks for a subscription over multipart. */
      wantsMultipart(request: FastifyRequest): boolean;
    };
  }
}

/** Register on the root instance after rateLimitPlugin, before the GraphQL routes: decorates it with `subscriptions`. */
export const subscriptionsPlugin = fp(startSubscriptions, { name: 'subscriptions', dependencies: ['rate-limit'] });
