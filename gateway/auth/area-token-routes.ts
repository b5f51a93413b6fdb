import type { FastifyInstance } from 'fastify';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { TOKEN_LIFETIME_SECONDS, type Scope } from '../../subgraphs/platform/auth/tokens.ts';
import type { TokenEndpoint } from '../../subgraphs/platform/subgraph.ts';
import { registerTokenRoute, TokenError, type TokenDeps } from './token-route.ts';

/** The areas' own token endpoints (SubgraphDefinition.tokenEndpoint), in the registry's order. */
export const areaTokenEndpoints: readonly TokenEndpoint[] =
  Object.values(subgraphDefinitions).flatMap((d) => (d.tokenEndpoint ? [d.tokenEndpoint] : []));

/** One area's token endpoint: the client-credentials grant, the area's scopes and answer shape. */
export function registerAreaTokenRoute(app: FastifyInstance, deps: TokenDeps, endpoint: TokenEndpoint) {
  registerTokenRoute(app, deps, {
    path: endpoint.path,
    readsQuery: true,
    defaultScopes: (granted: Scope[]) => {
      const given = endpoint.scopes(granted);
      if (!given) throw new TokenError('invalid_scope', endpoint.refusal);
      return given;
    },
    answer: (grant) => endpoint.answer(grant, TOKEN_LIFETIME_SECONDS),
  });
}
