import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FormattedExecutionResult, GraphQLFormattedError } from 'graphql';
import { AppError, statusForCode } from '../../subgraphs/platform/errors.ts';
import { sendGraphqlErrors } from '../http/graphql-reply.ts';
import { mediaRanges } from '../http/multipart.ts';
import { addVary } from '../http/vary.ts';
import { prepareSubscription, SubscriptionRefused, type SubscriptionRequest, type SubscriptionRules } from './document.ts';
import { TooManySubscriptions, type Holder, type SubscriptionEngine } from './engine.ts';

/** A heartbeat part (`{}`) this often keeps proxies and the client from taking a quiet stream for a dead one. */
export const MULTIPART_HEARTBEAT_MS = 5_000;
const BOUNDARY = 'graphql';
export const MULTIPART_SUBSCRIPTION_TYPE = `multipart/mixed;boundary="${BOUNDARY}";subscriptionSpec=1.0`;

/** Whether a request's Accept asks for Apollo's multipart subscription protocol (`multipart/mixed` with `subscriptionSpec=1.0`). */
export const acceptsMultipartSubscription = (request: FastifyRequest) => mediaRanges(request.headers.accept ?? '')
  .some(({ type, parameters, q }) => type === 'multipart/mixed' && q > 0 && parameters.subscriptionspec === '1.0');

/** One part; each ends with the boundary, so that a client handles it as it arrives rather than with the next. */
const part = (body: unknown) => `\r\ncontent-type: application/json; charset=utf-8\r\n\r\n${JSON.stringify(body)}\r\n--${BOUNDARY}`;

/** The error result the engine ends a stream with when it closes it (a revoked token, a slow consumer, shutdown). */
const isClosing = (result: FormattedExecutionResult) => !result.data && result.errors?.some((e) => e.extensions?.closeCode !== undefined);

function refusal(error: unknown): { status: number; errors: readonly GraphQLFormattedError[] } | undefined {
  if (error instanceof SubscriptionRefused) return { status: error.status, errors: error.errors.map((e) => e.toJSON()) };
  if (error instanceof TooManySubscriptions) return { status: 429, errors: [{ message: error.message, extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } }] };
  if (error instanceof AppError) return { status: statusForCode(error.code), errors: [error.toJSON() as GraphQLFormattedError] };
  return undefined;
}

/**
 * Subscriptions over HTTP on POST /graphql, as Apollo's multipart subscription protocol has them
 * (Apollo Client's HttpLink without a WebSocket link, Python's gql, Insomnia): the same engine, limits
 * and token checks as graphql-ws and graphql-sse. Each result is a part `{"payload": result}`; a
 * heartbeat part `{}` every MULTIPART_HEARTBEAT_MS; a stream the server ends closes with
 * `{"payload": null, "errors": [...]}` carrying the close reason's code. A document refused before it
 * starts is answered as JSON with the status of its error, as POST /graphql answers.
 */
export function multipartHandler(engine: SubscriptionEngine, rules: SubscriptionRules, heartbeatMs = MULTIPART_HEARTBEAT_MS) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    let results: AsyncIterableIterator<FormattedExecutionResult>;
    const body = new PassThrough();
    try {
      const prepared = prepareSubscription(rules, (request.body ?? {}) as SubscriptionRequest);
      const holder: Holder = {
        transport: 'multipart',
        subscriber: await engine.authenticate(request.headers.authorization),
        buffered: () => body.writableLength + reply.raw.writableLength,
      };
      results = await engine.subscribe(holder, prepared, await engine.anchorOf(holder.subscriber, prepared));
    } catch (error) {
      const refused = refusal(error);
      if (!refused) throw error;
      return sendGraphqlErrors(request, reply, refused.status, refused.errors);
    }
    const heartbeat = setInterval(() => body.write(part({})), heartbeatMs);
    const stop = () => {
      clearInterval(heartbeat);
      void results.return?.();
    };
    reply.raw.once('close', stop);
    void (async () => {
      try {
        for await (const result of results) {
          body.write(part(isClosing(result) ? { payload: null, errors: result.errors } : { payload: result }));
        }
      } finally {
        clearInterval(heartbeat);
        body.end('--\r\n');
      }
    })();
    body.write(`\r\n--${BOUNDARY}`);
    addVary(reply, 'Accept');
    return reply.code(200).type(MULTIPART_SUBSCRIPTION_TYPE).header('cache-control', 'no-store').send(body);
  };
}
