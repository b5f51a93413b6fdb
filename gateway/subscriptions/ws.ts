import type { FastifyRequest } from 'fastify';
import type { ExecutionResult, FormattedExecutionResult } from 'graphql';
import { makeHandler } from 'graphql-ws/use/@fastify/websocket';
import { AppError } from '../../subgraphs/platform/errors.ts';
import { connectionAuthorization } from './auth.ts';
import { CloseCode, closeReason } from './close-codes.ts';
import { prepareSubscription, SubscriptionRefused, type PreparedSubscription, type SubscriptionRules } from './document.ts';
import { TooManySubscriptions, type Holder, type SubscriptionEngine } from './engine.ts';

/** WebSocket's "try again later": the token could not be checked now (the database is down). */
const TRY_AGAIN_LATER = 1013;

interface Started { prepared: PreparedSubscription; holder: Holder }

/**
 * The graphql-ws protocol on `GET /graphql` (a WebSocket upgrade), for @fastify/websocket's `wsHandler`.
 * The token comes in `connection_init` (`{ "authorization": "Bearer <jwt>" }`) and is checked before
 * the acknowledgement: a bad one closes with 4401. Only subscriptions are run here; a query or a
 * mutation gets an error naming POST /graphql. Results are sent as the gateway formatted them.
 */
export function webSocketHandler(engine: SubscriptionEngine, rules: SubscriptionRules) {
  const holders = new WeakMap<object, Holder>();
  return makeHandler({
    schema: rules.schema,
    async onConnect(ctx) {
      const { socket } = ctx.extra;
      try {
        const subscriber = await engine.authenticate(connectionAuthorization(ctx.connectionParams));
        const holder: Holder = { transport: 'ws', subscriber, close: (code, reason) => socket.close(code, closeReason(reason)), buffered: () => socket.bufferedAmount };
        holders.set(ctx, holder);
        engine.open(holder);
        return true;
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        const unauthorized = error.code === 'UNAUTHENTICATED';
        socket.close(unauthorized ? CloseCode.Unauthorized : TRY_AGAIN_LATER, closeReason(`${unauthorized ? 'Unauthorized' : 'Try again later'}: ${error.message}`));
        return false;
      }
    },
    onSubscribe(ctx, _id, payload) {
      try {
        const prepared = prepareSubscription(rules, payload);
        const started: Started = { prepared, holder: holders.get(ctx)! };
        return { schema: rules.schema, document: prepared.document, operationName: prepared.operationName, variableValues: prepared.variables, contextValue: started };
      } catch (error) {
        if (error instanceof SubscriptionRefused) return error.errors;
        throw error;
      }
    },
    async subscribe({ contextValue }) {
      const { prepared, holder } = contextValue as Started;
      try {
        return await engine.subscribe(holder, prepared) as unknown as AsyncIterable<ExecutionResult>;
      } catch (error) {
        if (!(error instanceof TooManySubscriptions) && !(error instanceof AppError)) throw error;
        engine.close(holder, error instanceof TooManySubscriptions ? CloseCode.TooManySubscriptions : TRY_AGAIN_LATER, error.message);
        return { errors: [] };
      }
    },
    // The engine's results are already formatted (Apollo Server's); graphql-ws would format them again.
    onNext: (_ctx, _id, _payload, _args, result) => result as FormattedExecutionResult,
    onClose(ctx) {
      const holder = holders.get(ctx);
      if (holder) engine.release(holder);
    },
  });
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
