import type { SubgraphDefinition } from '../platform/subgraph.ts';
import { riskDataLoaded, startRiskDataLoad } from './data/load.ts';
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
  // The first start loads the shipped FARS crashes and builds the aggregates in the background:
  // the service answers meanwhile (area.dataStatus LOADING). Later starts find them stored.
  onStart: async (db, config, log) => {
    registerAreaPool(db.orm.em, createAreaPool(config, log));
    void startRiskDataLoad(db.orm.em.fork(), log, { lock: !!config.DATABASE_URL });
  },
  onClose: async (db) => {
    await riskDataLoaded(db.orm.em);
    await closeAreaPool(db.orm.em);
  },
};
