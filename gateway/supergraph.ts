import { readFileSync } from 'node:fs';
import { ApolloGateway, RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { REQUEST_ID_HEADER } from '../subgraphs/platform/log.ts';
import { supergraphPath } from '../schema/subgraphs.ts';

/** What the gateway keeps per request and forwards to subgraphs. */
export interface GatewayContext {
  authorization?: string;
  requestId: string;
}

/** Forwards the caller's token and the request id; each subgraph verifies the token again. */
class ForwardingDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>) {
    const headers = request.http?.headers;
    if (!headers || !context) return;
    if (context.authorization) headers.set('authorization', context.authorization);
    if (context.requestId) headers.set(REQUEST_ID_HEADER, context.requestId);
  }
}

/** The gateway on the committed static supergraph; `urls` overrides routing URLs by subgraph name. */
export function createGateway(urls: Record<string, string>) {
  const supergraphSdl = readFileSync(supergraphPath, 'utf8');
  return new ApolloGateway({
    supergraphSdl,
    buildService: ({ name, url }) => new ForwardingDataSource({ url: urls[name] ?? url }),
  });
}

export const subgraphReadyUrl = (graphqlUrl: string) => graphqlUrl.replace(/\/graphql\/?$/, '/readyz');
