import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GraphQLFormattedError } from 'graphql';
import Negotiator from 'negotiator';
import { addVary } from './vary.ts';

/** GraphQL over HTTP's response type, and the JSON one every client understands (first: the default). */
const MEDIA_TYPES = ['application/json', 'application/graphql-response+json'];

/** Whether the gateway answers a request's refusals in GraphQL's shape: /graphql and /graphql/stream, by routed path. */
export const answersInGraphqlShape = (request: FastifyRequest) => request.routeOptions.url?.startsWith('/graphql') === true;

/**
 * Sends GraphQL errors the gateway answers itself (before Apollo Server: a bad token, a CSRF
 * refusal, an Idempotency-Key refusal, a body nested too deep) in the media type the client accepts, as Apollo Server does.
 */
export function sendGraphqlErrors(request: FastifyRequest, reply: FastifyReply, status: number, errors: readonly GraphQLFormattedError[]) {
  const type = new Negotiator(request).mediaType(MEDIA_TYPES) ?? MEDIA_TYPES[0]!;
  return addVary(reply, 'Accept').code(status).type(`${type}; charset=utf-8`).send(JSON.stringify({ errors }));
}
