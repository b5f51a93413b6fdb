import { Readable } from 'node:stream';
import { HeaderMap, type ApolloServer, type BaseContext, type HTTPGraphQLRequest, type HTTPGraphQLResponse } from '@apollo/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { multipartContentType, multipartMixed } from '../http/multipart.ts';
import { addVary } from '../http/vary.ts';
import { rewrittenSearch } from '../trusted/http.ts';
import type { IncrementalDelivery, PayloadText } from '../query-plan-executor/deferred.ts';
import { withDeliverySlot, type DeliverySlot } from '../query-plan-executor/gateway.ts';
import type { RequestCollapsing } from './requests.ts';

/** The request as Apollo Server takes it, built as @as-integrations/fastify builds it (a GET's search as trusted documents left it). */
function httpGraphQLRequest(request: FastifyRequest): HTTPGraphQLRequest {
  const headers = new HeaderMap();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  }
  const search = rewrittenSearch(request) ?? new URL(request.url, `${request.protocol}://${request.hostname}/`).search;
  return { body: request.body, method: request.method.toUpperCase(), headers, search };
}

/** Apollo Server's answer, and the deferred fragments still to send when it is the first part of an incremental one. */
interface Answer { response: HTTPGraphQLResponse; delivery?: IncrementalDelivery }

/** The boundary of incremental answers: Apollo Server's and Apollo Router's. */
const DEFER_BOUNDARY = '-';

/** The primary part (Apollo Server's answer) with `hasNext: true`, then the deferred ones. */
async function* incrementalParts(primary: string, delivery: IncrementalDelivery): AsyncGenerator<PayloadText> {
  yield { json: `${primary.slice(0, primary.lastIndexOf('}'))},"hasNext":true}`, last: false };
  yield* delivery.payloads();
}

/**
 * The /graphql route's handler: @as-integrations/fastify's (status, headers, content negotiation and
 * streamed bodies as Apollo Server answers them), with identical in-flight queries collapsed when
 * `collapsing` is given. A follower gets the leader's complete answer (one immutable string) and, for an
 * incremental one, every deferred part from the first (the key holds `Accept`: only requests asking for the
 * same format share); a body Apollo Server streams cannot be shared, so a follower of one runs its own request.
 *
 * An operation with deferred fragments whose request accepts multipart/mixed; deferSpec=20220824 (the executor
 * decides, gateway/query-plan-executor) is answered in parts: Apollo Server's answer (status 200) is the first.
 */
export function graphqlHandler<TContext extends BaseContext>(apollo: ApolloServer<TContext>, context: (request: FastifyRequest) => Promise<TContext>, collapsing?: RequestCollapsing) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const run = async (): Promise<Answer> => {
      let slot: DeliverySlot | undefined;
      const response = await apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest: httpGraphQLRequest(request),
        context: async () => {
          const withSlot = withDeliverySlot(await context(request));
          slot = withSlot.slot;
          return withSlot.context;
        },
      });
      return { response, delivery: slot?.delivery };
    };
    let answer: Answer;
    if (collapsing) {
      const collapsed = await collapsing.run('graphql', await collapsing.graphqlKey(request), run);
      answer = collapsed.shared && collapsed.answer.response.body.kind !== 'complete' ? await run() : collapsed.answer;
    } else {
      answer = await run();
    }
    const { response, delivery } = answer;
    for (const [name, value] of response.headers) reply.header(name, value);
    // Apollo Server answers application/json or application/graphql-response+json as Accept asks (and GET /graphql the IDE).
    addVary(reply, 'Accept');
    reply.code(response.status ?? 200);
    if (response.body.kind !== 'complete') return reply.send(Readable.from(response.body.asyncIterator));
    if (!delivery || (response.status ?? 200) !== 200) return response.body.string;
    reply.header('content-type', multipartContentType(DEFER_BOUNDARY, 'deferSpec=20220824'));
    return reply.send(Readable.from(multipartMixed(DEFER_BOUNDARY, incrementalParts(response.body.string, delivery))));
  };
}
