import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { problemFromErrors, sendProblem } from '../../subgraphs/platform/rest/problem.ts';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { badInput, forbidden, unauthenticated } from '../../subgraphs/platform/errors.ts';
import { jsonBodyDepthError } from '../../subgraphs/platform/nesting-http.ts';
import type { RestRequest, RestRoute } from '../../subgraphs/platform/rest/types.ts';
import { unknownField } from '../../subgraphs/platform/rest/body.ts';
import { addVary } from '../http/vary.ts';
import { cacheControl, etagOf, matchesIfNoneMatch, versionTagOf } from './http-cache.ts';
import { selectsSecret } from '../idempotency/secrets.ts';

export interface OperationResult {
  data?: Record<string, unknown> | null;
  errors?: readonly GraphQLFormattedError[];
}

/** Runs a GraphQL document through the gateway in-process, as the caller. */
export type Execute = (query: string, variables: Record<string, unknown>, request: FastifyRequest) => Promise<OperationResult>;

const toFormatted = (error: GraphQLError): GraphQLFormattedError => error.toJSON();

const notModified = (reply: FastifyReply, etag: string, maxAge: number) =>
  reply.code(304).header('etag', etag).header('cache-control', cacheControl(maxAge)).send();

/**
 * A string parser for every content type, so a `rawBody` route sees the body text exactly as sent;
 * JSON text still gets the nesting bound of every JSON body.
 */
function rawBodyScope(scope: FastifyInstance, jsonMaxDepth: number) {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
    const error = /\bjson\b/i.test(request.headers['content-type'] ?? '') ? jsonBodyDepthError(body as string, jsonMaxDepth) : null;
    if (error) done(error, undefined);
    else done(null, body);
  });
}

export interface RestOptions {
  /** JSON bodies nest at most this deep. */
  jsonMaxDepth: number;
  /**
   * The version of the data behind the cacheable answers (the local risk subgraph's), null while
   * unknown (loading, or the subgraph is remote): with it, routes with a cache `key` are tagged
   * before evaluation and a matching If-None-Match is answered 304 without one.
   */
  cacheVersion?: () => Promise<string | null>;
}

/** Registers every row of a REST table on the gateway (`raw`: inside a rawBody scope). */
export function registerRestRoutes(app: FastifyInstance, routes: readonly RestRoute[], execute: Execute, options: RestOptions, raw = false) {
  const { jsonMaxDepth, cacheVersion } = options;
  for (const route of routes) {
    if (route.rawBody && !raw) {
      // An encapsulated scope: its content-type parsers apply to this route only.
      app.register(async (scope) => {
        rawBodyScope(scope, jsonMaxDepth);
        registerRestRoutes(scope, [route], execute, options, true);
      });
      continue;
    }
    const carriesSecret = selectsSecret(route.operation);
    app.route({
      method: route.method,
      url: route.path,
      ...(route.bodyLimit ? { bodyLimit: route.bodyLimit } : {}),
      config: { securityHeaders: route.securityHeaders, carriesSecret },
      handler: async (request, reply) => {
        if (route.negotiated) addVary(reply, 'Accept');
        // Who may call comes before what was sent: a caller without a token (or scope) learns nothing about input rules.
        if (route.scope) {
          const caller = (request as FastifyRequest & { caller?: Caller | null }).caller;
          if (!caller) return sendProblem(reply, problemFromErrors([unauthenticated().toJSON()]));
          if (route.scope !== 'any' && !caller.scopes.includes(route.scope)) return sendProblem(reply, problemFromErrors([forbidden(`The access token lacks the '${route.scope}' scope`).toJSON()]));
        }
        const unknown = raw ? undefined : unknownField(route, request.body);
        if (unknown !== undefined) {
          const known = Object.keys((route.docs?.requestBody?.properties ?? {}) as object).join(', ');
          return sendProblem(reply, problemFromErrors([badInput(`Unknown field ${JSON.stringify(unknown)}; this body takes ${known}`, unknown).toJSON()]));
        }
        const req: RestRequest = {
          params: request.params as Record<string, string>,
          query: (request.query ?? {}) as Record<string, unknown>,
          body: request.body,
          headers: request.headers,
          ...(raw ? { rawBody: typeof request.body === 'string' ? request.body : '' } : {}),
        };
        const cache = route.cache === 'no-store' ? undefined : route.cache;
        let result: OperationResult;
        let versionTag: string | undefined;
        try {
          const variables = route.variables(req);
          // Read before the evaluation: an ingest meanwhile gives a tag older than the answer (revalidated in full later), never the reverse.
          const version = cache?.key && cacheVersion ? await cacheVersion() : null;
          if (version) {
            versionTag = versionTagOf(version, route.path, cache!.key!(variables));
            if (matchesIfNoneMatch(request.headers['if-none-match'], versionTag, false)) return notModified(reply, versionTag, cache!.maxAge);
          }
          result = await execute(route.operation, variables, request);
        } catch (error) {
          if (error instanceof GraphQLError) return sendProblem(reply, problemFromErrors([toFormatted(error)]));
          throw error;
        }
        if (result.errors?.length) return sendProblem(reply, problemFromErrors(result.errors));
        let body: unknown;
        try {
          body = route.result(result.data ?? {}, req);
        } catch (error) {
          if (error instanceof GraphQLError) return sendProblem(reply, problemFromErrors([toFormatted(error)]));
          throw error;
        }
        if (route.headers) reply.headers(route.headers(result.data ?? {}, req));
        const noStore = carriesSecret || route.cache === 'no-store' || (cache && !cache.when(result.data ?? {}));
        if (noStore) reply.header('cache-control', 'no-store');
        else if (cache) {
          // Without a version, serialised here, once, so that the tag is of the bytes sent.
          if (!versionTag && typeof body !== 'string' && !Buffer.isBuffer(body)) {
            body = JSON.stringify(body);
            reply.type('application/json; charset=utf-8');
          }
          const etag = versionTag ?? etagOf(body as string | Buffer);
          if (matchesIfNoneMatch(request.headers['if-none-match'], etag)) return notModified(reply, etag, cache.maxAge);
          reply.header('etag', etag).header('cache-control', cacheControl(cache.maxAge));
        }
        reply.code(route.status ?? 200);
        return route.status === 204 ? reply.send() : reply.send(body);
      },
    });
  }
}
