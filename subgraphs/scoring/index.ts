import type { SubgraphDefinition } from '../platform/subgraph.ts';
import { User } from './entities.ts';
import { createLoaders, type ScoringLoaders } from './loaders.ts';
import { resolvers } from './resolvers.ts';

export const scoring: SubgraphDefinition<ScoringLoaders> = {
  name: 'scoring',
  typeDefs: new URL('./scoring.graphql', import.meta.url),
  resolvers,
  entities: [User],
  migrationsPath: new URL('./migrations', import.meta.url).pathname,
  scope: 'b2b',
  createLoaders,
};
