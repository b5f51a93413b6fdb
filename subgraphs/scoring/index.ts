import type { SubgraphDefinition } from '../platform/subgraph.ts';
import { ideExamples } from './ide-examples.ts';
import { MvrRecord, User } from './entities.ts';
import { WebhookOutbox } from '../platform/webhooks/outbox.ts';
import { createLoaders, type ScoringLoaders } from './loaders.ts';
import { loadMvrKeyring, registerKeyring } from './mvr/crypto.ts';
import { adoptKeyring } from './mvr/keyring-db.ts';
import { resolvers } from './resolvers.ts';
import { scoringRoutes } from './rest.ts';
import { userRoutes } from './rest-users.ts';

export const scoring: SubgraphDefinition<ScoringLoaders> = {
  name: 'scoring',
  typeDefs: new URL('./scoring.graphql', import.meta.url),
  resolvers,
  entities: [User, MvrRecord, WebhookOutbox],
  migrationsPath: new URL('./migrations', import.meta.url).pathname,
  scope: 'b2b',
  createLoaders,
  rest: [...userRoutes, ...scoringRoutes],
  examples: ideExamples,
  /** Loads the MVR keys and checks them against the database (refusing to start on a mismatch). */
  async onStart(db, config) {
    const keyring = await loadMvrKeyring(config);
    await adoptKeyring(db.orm.em.fork(), keyring);
    registerKeyring(db.orm.em, keyring);
  },
};
