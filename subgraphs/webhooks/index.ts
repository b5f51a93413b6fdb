import type { SubgraphDefinition } from '../platform/subgraph.ts';
import { ideExamples } from './ide-examples.ts';
import { RecordedEvent, WebhookDelivery, WebhookSubscription } from './entities.ts';
import { replayHistory } from './history.ts';
import { resolvers } from './resolvers.ts';
import { webhookRoutes } from './rest.ts';
import { webhookPayloadDocs } from './payload-docs.ts';
import { registerReceiverPolicy } from './service.ts';
import { startDeliveryWorker } from './worker.ts';

/** Webhook subscriptions of partners and the deliveries of the events the other subgraphs record. */
export const webhooks: SubgraphDefinition = {
  name: 'webhooks',
  typeDefs: new URL('./webhooks.graphql', import.meta.url),
  resolvers,
  entities: [WebhookSubscription, WebhookDelivery, RecordedEvent],
  migrationsPath: new URL('./migrations', import.meta.url).pathname,
  // Any authenticated client of the organisation; the resolvers check that a caller is there.
  scope: null,
  secretMutations: ['createWebhookSubscription', 'rotateWebhookSecret'],
  createLoaders: () => ({}),
  rest: webhookRoutes,
  webhookPayloads: webhookPayloadDocs,
  examples: ideExamples,
  onStart: async (db, config) => {
    registerReceiverPolicy(db.orm.em, { allowLoopback: config.WEBHOOK_ALLOW_LOOPBACK });
  },
  worker: startDeliveryWorker,
  eventHistory: replayHistory,
};
