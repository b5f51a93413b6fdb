import type { SubgraphDefinition } from '../platform/subgraph.ts';
import { ensureSampleData } from './data/load.ts';
import { riskEntities } from './entities.ts';
import { closeAreaPool, createAreaPool, registerAreaPool } from './geometry/pool.ts';
import { resolvers } from './resolvers.ts';

/** Risk Index (area E): public (no token), reference data only (no orgId). */
export const risk: SubgraphDefinition<Record<string, never>> = {
  name: 'risk',
  typeDefs: new URL('./risk.graphql', import.meta.url),
  resolvers,
  entities: riskEntities,
  migrationsPath: new URL('./migrations', import.meta.url).pathname,
  scope: null,
  createLoaders: () => ({}),
  onStart: async (db, config, log) => {
    registerAreaPool(db.orm.em, createAreaPool(config, log));
    await ensureSampleData(db.orm.em.fork(), log);
  },
  onClose: (db) => closeAreaPool(db.orm.em),
};
