import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';

/** Where subscriptions are served: the gateway's own layer (gateway/subscriptions), never an HTTP request. */
export const SUBSCRIPTION_TRANSPORTS = 'over WebSocket (graphql-ws) on /graphql, Server-Sent Events (graphql-sse) at /graphql/stream, or HTTP multipart '
  + '(POST /graphql with Accept: multipart/mixed;subscriptionSpec=1.0) of the gateway';

/**
 * A subscription sent as a plain HTTP request (GET /graphql, or POST without the multipart Accept; or to a subgraph) is
 * refused with 400 BAD_REQUEST naming the transports that run it: the gateway's executor would throw a
 * 500, and a subgraph, which has no subscription resolvers, would answer a null error.
 */
export const subscriptionsElsewherePlugin: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation }) {
        if (operation?.operation !== 'subscription') return;
        throw new GraphQLError(`Subscriptions are served ${SUBSCRIPTION_TRANSPORTS}; this request asks for none of them`, {
          extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
        });
      },
    };
  },
};
