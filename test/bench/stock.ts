import { readFileSync } from 'node:fs';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { ApolloGateway, RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { supergraphPath } from '../../schema/subgraphs.ts';
import { signingFetcher } from '../../subgraphs/platform/internal-hop.ts';
import type { InternalAuthorizer } from './internal-authorization.ts';

interface StockContext { authorization?: string }

/** The only change to a stock RemoteGraphQLDataSource: the subgraph gets the internal token for the caller's token. */
class AuthorizationForwarding extends RemoteGraphQLDataSource<StockContext> {
  private readonly subgraph: string;
  private readonly authorize: InternalAuthorizer;

  constructor(subgraph: string, authorize: InternalAuthorizer, url: string) {
    super({ url });
    this.subgraph = subgraph;
    this.authorize = authorize;
  }

  override async willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<StockContext>) {
    const authorization = await this.authorize(context?.authorization, this.subgraph);
    if (authorization) request.http?.headers.set('authorization', authorization);
  }
}

/**
 * A stock Apollo Server + Apollo Gateway with default settings (standalone HTTP server, default
 * make-fetch-happen fetcher, default caches) on the same committed supergraph, its routing URLs
 * overridden to the same subgraphs as ours. The baseline the issue compares our gateway with.
 */
export async function startStockGateway(urls: Record<string, string>, authorize: InternalAuthorizer, hopKey?: string) {
  const gateway = new ApolloGateway({
    supergraphSdl: readFileSync(supergraphPath, 'utf8'),
    buildService: ({ name, url }) => {
      const source = new AuthorizationForwarding(name, authorize, urls[name] ?? url ?? '');
      // Our subgraphs accept only signed requests: the default fetcher, signing each request.
      if (hopKey) source.fetcher = signingFetcher(source.fetcher, hopKey);
      return source;
    },
  });
  const server = new ApolloServer<StockContext>({ gateway });
  const { url } = await startStandaloneServer(server, {
    listen: { host: '127.0.0.1', port: 0 },
    context: async ({ req }) => ({ authorization: req.headers.authorization }),
  });
  return { url: new URL('/graphql', url).toString(), stop: () => server.stop() };
}
