import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import { GraphQLError } from 'graphql';

/**
 * A valid document whose operation cannot be chosen (an unknown `operationName`, or several
 * operations and no name) is the caller's error: 400 OPERATION_RESOLUTION_FAILURE, as Apollo
 * Server answers without a gateway. The gateway's executor would throw it as a 500.
 */
export const operationResolutionPlugin: ApolloServerPlugin = {
  async requestDidStart() {
    return {
      async didResolveOperation({ operation, request }) {
        if (operation) return;
        throw new GraphQLError(request.operationName ? `Unknown operation named "${request.operationName}"` : 'Must provide operation name if query contains multiple operations', {
          extensions: { code: ApolloServerErrorCode.OPERATION_RESOLUTION_FAILURE, http: { status: 400 } },
        });
      },
    };
  },
};
