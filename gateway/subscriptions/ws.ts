import { randomUUID } from 'node:crypto';
import { callerKey } from '../../subgraphs/platform/auth/caller-key.ts';
import type { FastifyRequest } from 'fastify';
import type { ExecutionResult } from 'graphql';
import type { Context } from 'graphql-ws';
import { AppError } from '../../subgraphs/platform/errors.ts';
import { connectionAuthorization } from './auth.ts';
import type { ClientLimit } from './client-limit.ts';
import { CloseCode } from './close-codes.ts';
import { prepareSubscription, SubscriptionRefused, trustedSubscription, type PreparedSubscription, type SubscriptionRules } from './document.ts';
import type { TrustedDocuments } from '../trusted/registry.ts';
import { TooManySubscriptions, type Holder, type SubscriptionEngine } from './engine.ts';
import type { RecordedEventRef } from '../../subgraphs/platform/events/history.ts';
import { graphqlWsConnections, type ConnectionExtra, type ConnectionOptions } from './ws-connection.ts';

interface Started {
  /** graphql-ws's id of the subscription, which its messages name. */
  id: string;
  prepared: PreparedSubscription;
  /** The event it resumes after (`after`). */
  anchor?: RecordedEventRef;
  holder: Holder;
  extra: ConnectionExtra;
}
type Iterable = AsyncIterable<ExecutionResult>;
type WsContext = Context<Record<string, unknown>, ConnectionExtra>;

export interface WebSocketOptions extends ConnectionOptions {
  /** SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT, counted where the subscriptions of a client are. */
  clientConnections: ClientLimit;
  maxPerClient: number;
  /** Trusted documents: a subscription is refused as POST /graphql would refuse its document. */
  trusted: TrustedDocuments;
}

/**
 * The graphql-ws protocol on `GET /graphql` (a WebSocket upgrade), for @fastify/websocket's `wsHandler`.
 * The token comes in `connection_init` (`{ "authorization": "Bearer <jwt>" }`) and is checked before
 * the acknowledgement: a bad one closes with 4401, a client over its connections 4429. Only
 * subscriptions are run here; a query or a mutation gets an error naming POST /graphql. Results are
 * sent as the gateway formatted them.
 */
export function webSocketHandler(engine: SubscriptionEngine, rules: SubscriptionRules, options: WebSocketOptions) {
  const holders = new WeakMap<object, Holder>();
  /** Each acknowledged connection's place among its client's connections. */
  const places = new WeakMap<object, { clientId: string; id: string }>();
  const { clientConnections, maxPerClient } = options;
  const connections = graphqlWsConnections({
    schema: rules.schema,
    async onConnect(ctx: WsContext) {
      const { connection, socket } = ctx.extra;
      try {
        const subscriber = await engine.authenticate(connectionAuthorization(ctx.connectionParams));
        const clientId = callerKey(subscriber.caller);
        const place = { clientId, id: randomUUID() };
        if (!(await clientConnections.acquire(clientId, place.id))) {
          const why = `Too many connections: client ${clientId} holds its maximum of ${maxPerClient}`;
          connection.close(CloseCode.TooManyConnections, why);
          return false;
        }
        // Closed while its place was being taken (a Redis round trip): onClose has run already.
        if (socket.readyState === socket.CLOSED) {
          clientConnections.release(clientId, place.id);
          return false;
        }
        places.set(ctx, place);
        connection.clientId = clientId;
        const holder: Holder = {
          transport: 'ws', subscriber,
          close: (code, reason) => connection.close(code, reason),
          buffered: () => socket.bufferedAmount,
        };
        holders.set(ctx, holder);
        engine.open(holder);
        return true;
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        if (error.code !== 'UNAUTHENTICATED') connection.close(CloseCode.TryAgainLater, `Try again later: ${error.message}`);
        else connection.close(CloseCode.Unauthorized, `Unauthorized: ${error.message}`, 'unauthorized');
        return false;
      }
    },
    async onSubscribe(ctx: WsContext, id, payload) {
      try {
        const holder = holders.get(ctx)!;
        const prepared = prepareSubscription(rules, await trustedSubscription(options.trusted, holder.subscriber.caller, payload));
        const anchor = await engine.anchorOf(holder.subscriber, prepared);
        const started: Started = { id, prepared, anchor, holder, extra: ctx.extra };
        return { schema: rules.schema, document: prepared.document, operationName: prepared.operationName, variableValues: prepared.variables, contextValue: started };
      } catch (error) {
        if (error instanceof SubscriptionRefused) return error.errors;
        throw error;
      }
    },
    async subscribe({ contextValue }) {
      const { id, prepared, anchor, holder, extra } = contextValue as Started;
      try {
        const results = await engine.subscribe(holder, prepared, anchor);
        // The engine's results are formatted already (Apollo Server's): written as they come, once graphql-ws pulls.
        results.sendTo(extra.connection.sender(id));
        extra.connection.subscribed();
        return results as unknown as Iterable;
      } catch (error) {
        if (!(error instanceof TooManySubscriptions) && !(error instanceof AppError)) throw error;
        const code = error instanceof TooManySubscriptions ? CloseCode.TooManySubscriptions : CloseCode.TryAgainLater;
        engine.close(holder, code, error.message);
        return { errors: [] };
      }
    },
    onClose(ctx: WsContext) {
      const holder = holders.get(ctx);
      if (holder) engine.release(holder);
      const place = places.get(ctx);
      if (place) clientConnections.release(place.clientId, place.id);
    },
  }, options);
  return {
    handler: (socket: ConnectionExtra['socket'], request: FastifyRequest) => connections.handle(socket, request),
    shutdown() {
      connections.shutdown();
      clientConnections.close();
    },
  };
}

/** The origin of the page that opens a WebSocket is its own host's, or one CORS_ORIGINS allows; clients outside a browser send none. */
export function originAllowed(request: FastifyRequest, allowed: readonly string[]): boolean {
  const origin = request.headers.origin;
  if (!origin) return true;
  if (allowed.includes(origin)) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}
