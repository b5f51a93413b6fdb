import type { SubgraphDefinition } from '../platform/subgraph.ts';
import { ideExamples } from './ide-examples.ts';
import { loadReferenceData } from './data/load.ts';
import { roadsideEntities } from './entities.ts';
import { createLoaders, type RoadsideLoaders } from './loaders.ts';
import { resolvers } from './resolvers.ts';
import { roadsideRoutes } from './rest.ts';
import { MAX_FILE_BYTES } from './rules.ts';
import { startSandboxProvider } from './sandbox/provider.ts';
import { roadsideToken } from './token.ts';

export const roadside: SubgraphDefinition<RoadsideLoaders> = {
  name: 'roadside',
  typeDefs: new URL('./roadside.graphql', import.meta.url),
  resolvers,
  entities: roadsideEntities,
  migrationsPath: new URL('./migrations', import.meta.url).pathname,
  scope: 'roadside',
  createLoaders,
  rest: roadsideRoutes,
  tokenEndpoint: roadsideToken,
  multipartFileBytes: MAX_FILE_BYTES,
  examples: ideExamples,
  /** The simulated provider of sandbox rescues. */
  worker: startSandboxProvider,
  /** Loads the shipped sample reference data (makes/models, providers, tow-to locations, plans); idempotent. */
  onStart: async (db, _config, log) => {
    const counts = await loadReferenceData(db.orm.em.fork({ clear: true, useContext: false }));
    log.info({ counts }, 'roadside reference data loaded');
  },
};
