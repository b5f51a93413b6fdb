import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { documentTooDeep, jsonTextTooDeep, tooDeep } from './nesting.ts';

/** The JSON media types whose bodies get the bound (GraphQL over HTTP's own included). */
const JSON_TYPES = ['application/json', 'application/graphql-response+json'];

/** The 400 (BAD_USER_INPUT) for JSON body text nesting deeper than `maxDepth`, or null. */
export const jsonBodyDepthError = (text: string, maxDepth: number) =>
  (jsonTextTooDeep(text, maxDepth) ? Object.assign(tooDeep('The JSON body', maxDepth), { statusCode: 400 }) : null);

/**
 * Fastify's JSON body parser, refusing first a body that nests deeper than `maxDepth`
 * (JSON_MAX_DEPTH) before the text is parsed. Register on the root instance before any scope, so
 * every route inherits it.
 */
export function boundedJsonParser(app: FastifyInstance, maxDepth: number) {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser(JSON_TYPES, { parseAs: 'string' }, (request, body, done) => {
    const error = jsonBodyDepthError(body as string, maxDepth);
    if (error) done(error, undefined);
    else parse(request, body as string, done);
  });
}

/** boundedJsonParser as a plugin: `await app.register(boundedJsonPlugin, { maxDepth })` on the root instance. */
export const boundedJsonPlugin = fp(async (app: FastifyInstance, { maxDepth }: { maxDepth: number }) => {
  boundedJsonParser(app, maxDepth);
}, { name: 'bounded-json' });

type GraphqlParams = { query?: unknown; variables?: unknown; extensions?: unknown } | undefined;

/**
 * On the GraphQL route at `path`, before Apollo Server sees the request: a document whose brackets
 * nest deeper than `maxDepth` (graphql-js's parser recurses once per level), and GET's
 * `variables=` / `extensions=` JSON nested deeper, answer 400 BAD_USER_INPUT. POST bodies are
 * bounded by boundedJsonParser already.
 */
export function boundGraphqlNesting(app: FastifyInstance, path: string, maxDepth: number) {
  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.url !== path) return;
    const get = request.method === 'GET';
    const params = (get ? request.query : request.body) as GraphqlParams;
    let error = typeof params?.query === 'string' && documentTooDeep(params.query, maxDepth) ? tooDeep('The GraphQL document', maxDepth, 'query') : null;
    for (const name of ['variables', 'extensions'] as const) {
      const text = get ? params?.[name] : undefined;
      if (!error && typeof text === 'string' && jsonTextTooDeep(text, maxDepth)) error = tooDeep(`The ${name}`, maxDepth, name);
    }
    if (error) return reply.code(400).send({ errors: [error.toJSON()] });
  });
}
