import { Kind, parse, type DocumentNode } from 'graphql';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { rootFieldNames } from '../../subgraphs/platform/root-fields.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's success answer carries a secret shown only there (a new client secret, a signing
     * secret): it is never kept for an Idempotency-Key, and a retry with the key answers 409
     * IDEMPOTENT_SECRET_NOT_REPLAYED instead of running again.
     */
    carriesSecret?: boolean;
  }
}

/** Mutation fields whose answers carry a secret, as the subgraphs declare them (SubgraphDefinition.secretMutations). */
export const SECRET_MUTATIONS: ReadonlySet<string> = new Set(
  Object.values(subgraphDefinitions).flatMap((definition) => definition.secretMutations ?? []),
);

/** The root fields (by field name, through fragments) that the mutations of a document select. */
const mutationFields = (document: DocumentNode): string[] => document.definitions.flatMap((d) =>
  (d.kind === Kind.OPERATION_DEFINITION && d.operation === 'mutation' ? rootFieldNames(d, document) : []));

/** Whether a document runs a mutation field whose answer carries a secret (a REST row whose operation does carries it too). */
export function selectsSecret(document: DocumentNode | string): boolean {
  const fields = mutationFields(typeof document === 'string' ? parse(document) : document);
  return fields.some((field) => SECRET_MUTATIONS.has(field));
}
