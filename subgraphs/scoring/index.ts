import type { SubgraphDefinition } from '../platform/subgraph.ts';
import { MvrRecord, User } from './entities.ts';
import { WebhookOutbox } from '../platform/webhooks/outbox.ts';
import { createLoaders, type ScoringLoaders } from './loaders.ts';
import { currentCalibration } from './model/calibration.ts';
import { loadReportVault, registerVault } from './mvr/crypto.ts';
import { resolvers } from './resolvers.ts';

export const scoring: SubgraphDefinition<ScoringLoaders> = {
  name: 'scoring',
  typeDefs: new URL('./scoring.graphql', import.meta.url),
  resolvers,
  entities: [User, MvrRecord, WebhookOutbox],
  migrationsPath: new URL('./migrations', import.meta.url).pathname,
  scope: 'b2b',
  createLoaders,
  /** Loads the MVR encryption key for this database, and calibrates the score model once. */
  async onStart(db, config) {
    registerVault(db.orm.em, await loadReportVault(config));
    currentCalibration();
  },
};
