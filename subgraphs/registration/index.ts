import type { SubgraphDefinition } from '../platform/subgraph.ts';
import { ideExamples } from './ide-examples.ts';
import { registrationEntities } from './entities.ts';
import { createLoaders, type RegistrationLoaders } from './loaders.ts';
import { resolvers } from './resolvers.ts';
import { registrationRoutes } from './rest.ts';

export const registration: SubgraphDefinition<RegistrationLoaders> = {
  name: 'registration',
  typeDefs: new URL('./registration.graphql', import.meta.url),
  resolvers,
  entities: registrationEntities,
  migrationsPath: new URL('./migrations', import.meta.url).pathname,
  scope: 'b2b',
  createLoaders,
  rest: registrationRoutes,
  examples: ideExamples,
};
