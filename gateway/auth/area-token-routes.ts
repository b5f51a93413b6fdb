import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { TOKEN_LIFETIME_SECONDS, type Scope } from '../../subgraphs/platform/auth/tokens.ts';
import type { TokenEndpoint } from '../../subgraphs/platform/subgraph.ts';
import { grantClientCredentials, sendTokenError, TokenError, type TokenDeps } from './token-route.ts';

/** The areas' own token endpoints (SubgraphDefinition.tokenEndpoint), in the registry's order. */
export const areaTokenEndpoints: readonly TokenEndpoint[] =
  Object.values(subgraphDefinitions).flatMap((d) => (d.tokenEndpoint ? [d.tokenEndpoint] : []));

/** One area's token endpoint: the client-credentials grant, the area's scopes and answer shape. */
export function registerAreaTokenRoute(app: FastifyInstance, deps: TokenDeps, endpoint: TokenEndpoint) {
  const scopes = (granted: Scope[]) => {
    const given = endpoint.scopes(granted);
    if (!given) throw new TokenError('invalid_scope', endpoint.refusal);
    return given;
  };
  app.post(endpoint.path, async (request: FastifyRequest, reply: FastifyReply) => {
    try {
      const grant = await grantClientCredentials(deps, {
        body: request.body, authorization: request.headers.authorization, ip: request.ip, url: request.url,
        query: request.query as Record<string, unknown>,
      }, scopes);
      return reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
        .send(endpoint.answer(grant, TOKEN_LIFETIME_SECONDS));
    } catch (error) {
      if (sendTokenError(error, reply, /^Basic\s/i.test(request.headers.authorization ?? ''))) return reply;
      throw error;
    }
  });
}
