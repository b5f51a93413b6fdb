import { randomUUID } from 'node:crypto';
import { callerKey } from '../../subgraphs/platform/auth/caller-key.ts';
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ExecutionResult, GraphQLError } from 'graphql';
import type { Response } from 'graphql-sse';
import { createHandler, type RequestContext } from 'graphql-sse/lib/use/fastify';
import { AppError, statusForCode } from '../../subgraphs/platform/errors.ts';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { prepareSubscription, SubscriptionRefused, trustedSubscription, type SubscriptionRules } from './document.ts';
import type { TrustedDocuments } from '../trusted/registry.ts';
import { API_SECURITY_HEADERS } from '../http/security-headers.ts';
import { problem, PROBLEM_TYPE } from '../../subgraphs/platform/rest/problem.ts';
import { TooManySubscriptions, type Holder, type SubscriptionEngine } from './engine.ts';
import { StreamReservations } from './reservations.ts';
import { resumed, withEventIds } from './sse-ids.ts';
import { PreSerialised } from './pre-serialised.ts';

export const SSE_PATH = '/graphql/stream';
/** How graphql-sse's single-connection mode names a reserved stream (header, or query parameter). */
const STREAM_TOKEN_HEADER = 'x-graphql-event-stream-token';
const STREAM_TOKEN_QUERY = 'token';

/** The reserved stream a request names, if any. */
const streamTokenOf = (request: FastifyRequest) => request.headers[STREAM_TOKEN_HEADER]
  ?? new URL(request.url, 'http://localhost/').searchParams.get(STREAM_TOKEN_QUERY);

const refusal = (status: number, errors: readonly (GraphQLError | { message: string; extensions: Record<string, unknown> })[]) => [
  JSON.stringify({ errors }),
  { status, statusText: '', headers: { 'content-type': 'application/json; charset=utf-8' } },
] as [string, { status: number; statusText: string; headers: Record<string, string> }];

const streamNotFound = () => refusal(404, [{ message: 'Stream not found', extensions: { code: 'NOT_FOUND' } }]);
const streamNotOpen = () => refusal(409, [{
  message: 'Open the reserved stream (GET with Accept: text/event-stream) before sending operations to it',
  extensions: { code: 'STREAM_NOT_OPEN' },
}]);
/** graphql-sse's answer to a reservation. */
const created = (token: string): Response => [token, { status: 201, statusText: 'Created', headers: { 'content-type': 'text/plain; charset=utf-8' } }];

/** Past SSE_RESERVATIONS_MAX_PER_CLIENT: a problem, as the request rate limit's 429. */
function tooManyReservations(request: FastifyRequest, clientId: string, max: number, retryAfter: number): Response {
  const detail = `Too many reserved streams: client ${clientId} holds its maximum of ${max} (SSE_RESERVATIONS_MAX_PER_CLIENT); `
    + 'open or close one, or retry after Retry-After';
  const body = { ...problem(429, 'TOO_MANY_RESERVATIONS', detail, { retryAfter }), instance: SSE_PATH, requestId: request.id };
  const headers = { 'content-type': PROBLEM_TYPE, 'retry-after': String(retryAfter) };
  return [JSON.stringify(body), { status: 429, statusText: 'Too Many Requests', headers }];
}

/** graphql-sse's fastify adapter answers into `reply.raw`: a reservation handed over is answered nowhere. */
const nowhere = {
  getHeader: () => undefined,
  getHeaders: () => ({}),
  raw: { writeHead: () => undefined, end: (_body: unknown, done: () => void) => done() },
};

export interface SseOptions {
  /** SSE_RESERVATIONS_MAX_PER_CLIENT. */
  reservationsPerClient: number;
  /** How long a reservation waits for its stream to open (tests shorten it). */
  reservationUnopenedMs?: number;
  /** Trusted documents: a subscription is refused as POST /graphql would refuse its document. */
  trusted: TrustedDocuments;
}

/**
 * graphql-sse at /graphql/stream, in both of its modes (a stream per subscription, or one stream
 * reserved with PUT carrying many), behind the token gate: the Authorization header of each
 * subscribing request is its subscriber's. A refused subscription answers with the status of its
 * error and GraphQL errors; one closed by the server ends its stream with a last error result
 * whose `extensions.closeCode` is the WebSocket close code (gateway/subscriptions/close-codes.ts).
 * Reservations are the gateway's own (reservations.ts) until their stream opens.
 */
export function sseHandler(engine: SubscriptionEngine, rules: SubscriptionRules, options: SseOptions) {
  // Only the client that reserved a stream may open it or send operations to it.
  const { reservationsPerClient, reservationUnopenedMs } = options;
  const reservations = new StreamReservations(reservationsPerClient, reservationUnopenedMs);
  // The PUTs that hand a reservation over to graphql-sse as its stream opens, by the token they carry.
  const handovers = new WeakMap<object, string>();
  // Each stream's pre-serialised payloads, those of the reserved streams open by their token, and each subscription's.
  const payloads = new WeakMap<ServerResponse, PreSerialised>();
  const openStreams = new Map<string, PreSerialised | undefined>();
  const streamOf = new WeakMap<FastifyRequest, PreSerialised | undefined>();
  const handOver = async (token: string) => {
    const put = { method: 'PUT', url: SSE_PATH, headers: { accept: '*/*', [STREAM_TOKEN_HEADER]: token } };
    handovers.set(put, token);
    await handler(put as never, nowhere as never);
  };
  const handler = createHandler({
    /**
     * Replaces graphql-sse's: its fastify adapter reads an absent header as "undefined", which every
     * request without a stream token would then share as one reserved stream.
     */
    async authenticate(req) {
      const request = req.raw;
      const handedOver = handovers.get(request);
      if (handedOver) return handedOver;
      const caller = (request as FastifyRequest & { caller?: Caller | null }).caller;
      if (!caller) return refusal(401, [{ message: 'A valid bearer token is required', extensions: { code: 'UNAUTHENTICATED' } }]);
      const presented = streamTokenOf(request);
      if (typeof presented === 'string' && presented) {
        if (reservations.ownerOf(presented) !== callerKey(caller)) return streamNotFound();
        if (reservations.isOpen(presented)) return presented;
        if (req.headers.get('accept') !== 'text/event-stream') {
          // Nothing runs on a stream not open yet: there is nothing to complete, and nothing may start.
          return request.method === 'DELETE' ? [null, { status: 200, statusText: 'OK' }] : streamNotOpen();
        }
        reservations.opened(presented);
        const { raw } = (req.context as RequestContext).reply;
        openStreams.set(presented, payloads.get(raw));
        raw.once('close', () => { reservations.end(presented); openStreams.delete(presented); });
        await handOver(presented);
        return presented;
      }
      if (request.method !== 'PUT') return randomUUID();
      const reserved = reservations.reserve(callerKey(caller));
      if ('token' in reserved) return created(reserved.token);
      return tooManyReservations(request, callerKey(caller), reservationsPerClient, reserved.retryAfter);
    },
    // Validated (with the gateway's limits) in onSubscribe.
    validate: () => [],
    async onSubscribe(req, params) {
      try {
        const subscriber = await engine.authenticate(req.raw.headers.authorization);
        const request = await trustedSubscription(options.trusted, subscriber.caller, params);
        const prepared = resumed(prepareSubscription(rules, request), req.raw);
        const anchor = await engine.anchorOf(subscriber, prepared);
        const holder: Holder = { transport: 'sse', subscriber };
        const token = streamTokenOf(req.raw);
        const stream = typeof token === 'string'
          ? openStreams.get(token) : payloads.get((req.context as RequestContext).reply.raw);
        streamOf.set(req.raw, stream);
        // Formatted results (Apollo Server's), which graphql-sse sends as they are.
        return await engine.subscribe(holder, prepared, anchor) as unknown as AsyncIterable<ExecutionResult>;
      } catch (error) {
        if (error instanceof SubscriptionRefused) return refusal(error.status, error.errors);
        if (error instanceof TooManySubscriptions) return refusal(429, [{ message: error.message, extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } }]);
        if (error instanceof AppError) return refusal(statusForCode(error.code), [error.toJSON() as never]);
        throw error;
      }
    },
    // A shared execution's one result is serialised once for all its streams.
    onNext: (_ctx, req, result) => streamOf.get(req.raw)?.placeholder(result) as ExecutionResult | undefined,
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
      const results = new PreSerialised();
      payloads.set(reply.raw, results);
      withEventIds(reply.raw, results);
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
      reservations.close();
      // Kept alive, their connections would hold the server's close until the keep-alive timeout.
      for (const raw of streams) raw.socket?.end();
    },
  };
}
