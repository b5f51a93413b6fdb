import { Readable } from 'node:stream';
import { HeaderMap, type ApolloServer, type BaseContext, type HTTPGraphQLRequest } from '@apollo/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { addVary } from '../http/vary.ts';
import { rewrittenSearch } from '../trusted/http.ts';
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

/**
 * The /graphql route's handler: @as-integrations/fastify's (status, headers, content negotiation and
 * streamed bodies as Apollo Server answers them), with identical in-flight queries collapsed when
 * `collapsing` is given. A follower gets the leader's complete answer (one immutable string); a
 * streamed answer cannot be shared, so a follower of one runs its own request.
 */
export function graphqlHandler<TContext extends BaseContext>(apollo: ApolloServer<TContext>, context: (request: FastifyRequest) => Promise<TContext>, collapsing?: RequestCollapsing) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const run = () => apollo.executeHTTPGraphQLRequest({ httpGraphQLRequest: httpGraphQLRequest(request), context: () => context(request) });
    let response;
    if (collapsing) {
      const collapsed = await collapsing.run('graphql', await collapsing.graphqlKey(request), run);
      response = collapsed.shared && collapsed.answer.body.kind !== 'complete' ? await run() : collapsed.answer;
    } else {
      response = await run();
    }
    for (const [name, value] of response.headers) reply.header(name, value);
    // Apollo Server answers application/json or application/graphql-response+json as Accept asks (and GET /graphql the IDE).
    addVary(reply, 'Accept');
    reply.code(response.status ?? 200);
    return response.body.kind === 'complete' ? response.body.string : reply.send(Readable.from(response.body.asyncIterator));
  };
}
