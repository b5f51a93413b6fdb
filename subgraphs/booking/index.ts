import type { SubgraphDefinition } from '../platform/subgraph.ts';
import { ideExamples } from './ide-examples.ts';
import { Booking, Vehicle } from './entities.ts';
import { createLoaders, type BookingLoaders } from './loaders.ts';
import { resolvers } from './resolvers.ts';
import { bookingRoutes } from './rest.ts';
import { WebhookOutbox } from '../platform/webhooks/outbox.ts';

export const booking: SubgraphDefinition<BookingLoaders> = {
  name: 'booking',
  typeDefs: new URL('./booking.graphql', import.meta.url),
  resolvers,
  entities: [Vehicle, Booking, WebhookOutbox],
  migrationsPath: new URL('./migrations', import.meta.url).pathname,
  scope: 'b2b',
  createLoaders,
  rest: bookingRoutes,
  examples: ideExamples,
};
