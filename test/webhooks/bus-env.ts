import { startNatsServer, type NatsServer } from '../support/nats-server.ts';

/**
 * The event bus a webhook test runs on: on PostgreSQL (DATABASE_URL) NATS JetStream, on a nats-server
 * of the test's own; on the embedded PGlite the in-process bus. `env` goes into the stack's environment.
 */
export async function testBus(): Promise<{ env: Record<string, string>; nats?: NatsServer; close(): Promise<void> }> {
  if (!process.env.DATABASE_URL) return { env: {}, close: async () => undefined };
  const nats = await startNatsServer();
  return { env: { NATS_URL: nats.url }, nats, close: () => nats.close() };
}
