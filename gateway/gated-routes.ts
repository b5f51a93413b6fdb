import type { ApolloServer } from '@apollo/server';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ParseOptions } from 'graphql';
import type { Caller } from '../subgraphs/platform/auth/tokens.ts';
import type { RevocationCheck } from './auth/revocation.ts';
import type { Config } from '../subgraphs/platform/config.ts';
import { statusForCode } from '../subgraphs/platform/errors.ts';
import { boundGraphqlNesting } from '../subgraphs/platform/nesting-http.ts';
import type { PublicAnswers } from '../subgraphs/platform/public-answers.ts';
import { registerAdminClientRoutes } from './admin/clients-routes.ts';
import { registerAdminIssuerRoutes } from './admin/issuers-routes.ts';
import { registerAdminDocumentRoutes, type AdminDocumentsOptions } from './admin/documents-routes.ts';
import type { ClientStore } from './auth/clients.ts';
import type { IssuerStore } from './auth/issuers.ts';
import type { TrustedIssuers } from './auth/oidc/trusted-issuers.ts';
import type { createTokenGate } from './auth/token-gate.ts';
import { graphqlHandler } from './collapse/graphql-handler.ts';
import type { RequestCollapsing } from './collapse/requests.ts';
import { answersInGraphqlShape, sendGraphqlErrors } from './http/graphql-reply.ts';
import { idempotencyPlugin, type IdempotencyOptions } from './idempotency/plugin.ts';
import { addRequestRateLimit } from './protection/limits.ts';
import { restRoutes } from './rest/index.ts';
import { problemFromErrors, sendProblem } from '../subgraphs/platform/rest/problem.ts';
import { registerRestRoutes, type Execute, type OperationResult } from './rest/register.ts';
import { SSE_PATH } from './subscriptions/sse.ts';
import { originAllowed } from './subscriptions/ws.ts';
import type { GatewayContext } from './supergraph.ts';
import { trustedDocumentsHook } from './trusted/http.ts';

export interface GatedRoutesOptions {
  config: Config;
  apollo: ApolloServer<GatewayContext>;
  gate: ReturnType<typeof createTokenGate>;
  parseOptions: ParseOptions;
  idempotency: Omit<IdempotencyOptions, 'graphqlPath' | 'parseOptions'>;
  collapsing?: RequestCollapsing;
  clients: ClientStore;
  issuers: IssuerStore;
  trustedIssuers: TrustedIssuers;
  revocation: RevocationCheck;
  publicAnswers?: PublicAnswers;
  /** Trusted documents: the /graphql hook and the admin routes. */
  documents: AdminDocumentsOptions;
}

const contextFrom = (request: FastifyRequest): GatewayContext => {
  const caller = (request as FastifyRequest & { caller?: Caller | null }).caller;
  return { caller, requestId: request.id, orgId: caller?.orgId, clientId: caller?.clientId };
};

/** What a REST row runs: its operation through Apollo, shared with the callers it collapsed when collapsing is on. */
function restExecute(apollo: ApolloServer<GatewayContext>, collapsing: RequestCollapsing | undefined): Execute {
  const executeOperation: Execute = async (query, variables, request) => {
    const response = await apollo.executeOperation({ query, variables }, { contextValue: contextFrom(request) });
    if (response.body.kind !== 'single') throw new Error('incremental delivery is not used by REST routes');
    return response.body.singleResult as OperationResult;
  };
  // A REST row's result is shared by the callers it collapsed: rows' `result` functions read it, never change it.
  return collapsing
    ? async (query, variables, request) => {
      const key = collapsing.restKey(query, variables, request);
      return (await collapsing.run('rest', key, () => executeOperation(query, variables, request))).answer;
    }
    : executeOperation;
}

/**
 * GraphQL (POST, GET, WebSocket and SSE subscriptions), the REST paths and the admin paths, in one
 * scope behind the token gate, then the request rate limit, the nesting bound and Idempotency-Keys.
 * Register (encapsulated) after subscriptionsPlugin, whose handlers the GraphQL routes take.
 */
export async function gatedRoutes(api: FastifyInstance, options: GatedRoutesOptions) {
  const { config, apollo, gate, parseOptions, collapsing } = options;
  api.addHook('onRequest', gate.hook((request, reply, error) => (answersInGraphqlShape(request)
    ? sendGraphqlErrors(request, reply, statusForCode(error.code), [
      { message: error.message, extensions: { code: error.code } },
    ])
    : sendProblem(reply, problemFromErrors([error.toJSON()])))));
  addRequestRateLimit(api, config);
  // Before the idempotency plugin, which parses the document.
  boundGraphqlNesting(api, '/graphql', config.JSON_MAX_DEPTH);
  trustedDocumentsHook(api, options.documents.trusted, '/graphql');
  await api.register(idempotencyPlugin, { ...options.idempotency, graphqlPath: '/graphql', parseOptions });
  const handler = graphqlHandler(apollo, async (request: FastifyRequest) => contextFrom(request), collapsing);
  const { wsHandler, sseHandler, multipartHandler, wantsMultipart } = api.subscriptions;
  api.route({
    method: ['POST', 'OPTIONS'], url: '/graphql',
    handler: (request, reply) => (wantsMultipart(request) ? multipartHandler(request, reply) : handler(request, reply)),
  });
  // GET /graphql: a query in the URL, or a WebSocket upgrade to graphql-ws (subscriptions).
  api.route({
    method: 'GET', url: '/graphql', handler, wsHandler,
    onRequest: async (request, reply) => {
      if (request.ws && !originAllowed(request, config.CORS_ORIGINS)) {
        return sendGraphqlErrors(request, reply, 403, [{ message: `Origin ${request.headers.origin} may not open a WebSocket here (CORS_ORIGINS)`, extensions: { code: 'FORBIDDEN' } }]);
      }
    },
  });
  api.route({ method: ['GET', 'POST', 'PUT', 'DELETE'], url: SSE_PATH, handler: sseHandler });
  const restOptions = { jsonMaxDepth: config.JSON_MAX_DEPTH, cacheVersion: options.publicAnswers?.version };
  registerRestRoutes(api, restRoutes, restExecute(apollo, collapsing), restOptions);
  registerAdminClientRoutes(api, options.clients, options.revocation);
  registerAdminIssuerRoutes(api, options.issuers, options.trustedIssuers);
  registerAdminDocumentRoutes(api, options.documents);
}
