import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FormattedExecutionResult, GraphQLFormattedError } from 'graphql';
import { AppError, statusForCode } from '../../subgraphs/platform/errors.ts';
import { sendGraphqlErrors } from '../http/graphql-reply.ts';
import { mediaRanges, multipartMixed } from '../http/multipart.ts';
import { addVary } from '../http/vary.ts';
import { prepareSubscription, SubscriptionRefused, type SubscriptionRequest, type SubscriptionRules } from './document.ts';
import { TooManySubscriptions, type Holder, type SubscriptionEngine } from './engine.ts';
import { serialisedResult } from './pre-serialised.ts';

/** A heartbeat part (`{}`) this often keeps proxies and the client from taking a quiet stream for a dead one. */
export const MULTIPART_HEARTBEAT_MS = 5_000;
const BOUNDARY = 'graphql';
export const MULTIPART_SUBSCRIPTION_TYPE = `multipart/mixed;boundary="${BOUNDARY}";subscriptionSpec=1.0`;

/** Whether a request's Accept asks for Apollo's multipart subscription protocol (`multipart/mixed` with `subscriptionSpec=1.0`). */
export const acceptsMultipartSubscription = (request: FastifyRequest) => mediaRanges(request.headers.accept ?? '')
  .some(({ type, parameters, q }) => type === 'multipart/mixed' && q > 0 && parameters.subscriptionspec === '1.0');

/** The error result the engine ends a stream with when it closes it (a revoked token, a slow consumer, shutdown). */
const isClosing = (result: FormattedExecutionResult) => !result.data && result.errors?.some((e) => e.extensions?.closeCode !== undefined);

/** Each result as a part as it comes, and a heartbeat `{}` every `heartbeatMs`, until the results end. */
async function* partsOf(results: AsyncIterator<FormattedExecutionResult>, heartbeatMs: number) {
  let beats = 0;
  let wake = () => {};
  const heartbeat = setInterval(() => { beats += 1; wake(); }, heartbeatMs);
  try {
    let next = results.next();
    for (;;) {
      const beat = new Promise<null>((resolve) => { wake = () => resolve(null); });
      const result = await Promise.race([next, beat]);
      for (; beats > 0; beats -= 1) yield { json: '{}', last: false };
      if (result === null) continue;
      if (result.done) return;
      const { value } = result;
      // A shared execution's one result is serialised once for all its subscribers.
      const json = isClosing(value) ? JSON.stringify({ payload: null, errors: value.errors }) : `{"payload":${serialisedResult(value)}}`;
      yield { json, last: false };
      next = results.next();
    }
  } finally {
    clearInterval(heartbeat);
  }
}

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
    reply.raw.once('close', () => void results.return?.());
    void (async () => {
      try {
        const parts = partsOf(results, heartbeatMs);
        for await (const chunk of multipartMixed(BOUNDARY, parts, null)) body.write(chunk);
      } finally {
        body.end();
      }
    })();
    addVary(reply, 'Accept');
    return reply.code(200).type(MULTIPART_SUBSCRIPTION_TYPE).header('cache-control', 'no-store').send(body);
  };
}
