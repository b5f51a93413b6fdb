import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { ExecutionResult, GraphQLError } from 'graphql';
import { createHandler } from 'graphql-sse/lib/use/fastify';
import { AppError, statusForCode } from '../../subgraphs/platform/errors.ts';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { prepareSubscription, SubscriptionRefused, type SubscriptionRules } from './document.ts';
import { API_SECURITY_HEADERS } from '../security-headers.ts';
import { TooManySubscriptions, type Holder, type SubscriptionEngine } from './engine.ts';

export const SSE_PATH = '/graphql/stream';
/** How graphql-sse's single-connection mode names a reserved stream (header, or query parameter). */
const STREAM_TOKEN_HEADER = 'x-graphql-event-stream-token';
const STREAM_TOKEN_QUERY = 'token';
/** Reserved streams remembered (with their client) at once, and for how long. */
const STREAMS_KEPT = 10_000;
const STREAM_KEPT_MS = 60 * 60 * 1000;

const refusal = (status: number, errors: readonly (GraphQLError | { message: string; extensions: Record<string, unknown> })[]) => [
  JSON.stringify({ errors }),
  { status, statusText: '', headers: { 'content-type': 'application/json; charset=utf-8' } },
] as [string, { status: number; statusText: string; headers: Record<string, string> }];

/**
 * graphql-sse at /graphql/stream, in both of its modes (a stream per subscription, or one stream
 * reserved with PUT carrying many), behind the token gate: the Authorization header of each
 * subscribing request is its subscriber's. A refused subscription answers with the status of its
 * error and GraphQL errors; one closed by the server ends its stream with a last error result
 * whose `extensions.closeCode` is the WebSocket close code (gateway/subscriptions/close-codes.ts).
 */
export function sseHandler(engine: SubscriptionEngine, rules: SubscriptionRules) {
  // The client that reserved each stream: only it may open it or send operations to it.
  const owners = new LRUCache<string, string>({ max: STREAMS_KEPT, ttl: STREAM_KEPT_MS });
  const handler = createHandler({
    /**
     * Replaces graphql-sse's: its fastify adapter reads an absent header as "undefined", which every
     * request without a stream token would then share as one reserved stream.
     */
    authenticate(req) {
      const request = req.raw;
      const caller = (request as FastifyRequest & { caller?: Caller | null }).caller;
      if (!caller) return refusal(401, [{ message: 'A valid bearer token is required', extensions: { code: 'UNAUTHENTICATED' } }]);
      const presented = request.headers[STREAM_TOKEN_HEADER] ?? new URL(request.url, 'http://localhost/').searchParams.get(STREAM_TOKEN_QUERY);
      if (typeof presented === 'string' && presented) {
        return owners.get(presented) === caller.clientId ? presented : refusal(404, [{ message: 'Stream not found', extensions: { code: 'NOT_FOUND' } }]);
      }
      const token = randomUUID();
      if (request.method === 'PUT') owners.set(token, caller.clientId);
      return token;
    },
    // Validated (with the gateway's limits) in onSubscribe.
    validate: () => [],
    async onSubscribe(req, params) {
      try {
        const prepared = prepareSubscription(rules, params);
        const holder: Holder = { transport: 'sse', subscriber: await engine.authenticate(req.raw.headers.authorization) };
        // Formatted results (Apollo Server's), which graphql-sse sends as they are.
        return await engine.subscribe(holder, prepared) as unknown as AsyncIterable<ExecutionResult>;
      } catch (error) {
        if (error instanceof SubscriptionRefused) return refusal(error.status, error.errors);
        if (error instanceof TooManySubscriptions) return refusal(429, [{ message: error.message, extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } }]);
        if (error instanceof AppError) return refusal(statusForCode(error.code), [error.toJSON() as never]);
        throw error;
      }
    },
  });
  const open = new Map<FastifyReply, Promise<void>>();
  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      await handler(request, reply);
    } catch (error) {
      request.log.error({ err: { type: (error as Error).name, message: (error as Error).message } }, 'graphql-sse failed');
      if (!reply.raw.headersSent) reply.raw.writeHead(500, { ...API_SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8' });
      reply.raw.end(JSON.stringify({ errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }] }));
    }
  };
  return {
    async handle(request: FastifyRequest, reply: FastifyReply) {
      // graphql-sse writes the answer itself (a stream may stay open for hours).
      reply.hijack();
      // Or its connection closes: graphql-sse's fastify adapter waits for a 'finish' that a client gone never lets come.
      const closed = new Promise<void>((resolve) => reply.raw.once('close', resolve));
      const done = Promise.race([serve(request, reply), closed]).finally(() => open.delete(reply));
      open.set(reply, done);
      await done;
    },
    /**
     * After the engine ended every subscription: lets each stream send its last results, then ends
     * the streams still open (a single-connection stream outlives its operations), so that the
     * server's close finds their connections idle instead of waiting on them.
     */
    async drain(graceMs = 1_000) {
      const streams = [...open.keys()].map((reply) => reply.raw);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([Promise.all(open.values()), new Promise((resolve) => { timer = setTimeout(resolve, graceMs); })]);
      clearTimeout(timer);
      for (const reply of open.keys()) reply.raw.destroy();
      await Promise.all(open.values());
      // Kept alive, their connections would hold the server's close until the keep-alive timeout.
      for (const raw of streams) raw.socket?.end();
    },
  };
}
