import type { GraphQLSchema } from 'graphql';
import { scalarResolvers } from '../subgraphs/platform/scalars.ts';

/**
 * Gives the gateway's API schema the subgraphs' own input coercion for the shared custom scalars
 * (built from the supergraph, they would accept any value): a bad variable is then refused while
 * the request is validated (400 BAD_USER_INPUT naming the variable, as for Int), and a bad literal
 * fails validation, before any subgraph runs. Output is left as the subgraphs serialised it.
 */
export function coerceSharedScalars(schema: GraphQLSchema): void {
  for (const [name, scalar] of Object.entries(scalarResolvers)) {
    const type = schema.getType(name);
    // Duck-typed: under vitest the gateway's CommonJS graphql is another copy than this module's.
    if (!type || !('parseLiteral' in type)) continue;
    type.parseValue = scalar.parseValue;
    type.parseLiteral = scalar.parseLiteral;
  }
}
