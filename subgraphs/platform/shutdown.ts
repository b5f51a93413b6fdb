import type { FastifyBaseLogger } from 'fastify';
import { flushTracing } from './tracing/switch.ts';

/** On SIGTERM/SIGINT: stop taking connections, let in-flight requests finish, export the last spans, then exit. */
export function onShutdown(log: FastifyBaseLogger, close: () => Promise<void>) {
  let closing = false;
  const handler = (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'draining and shutting down');
    close().then(flushTracing).then(() => process.exit(0), (error: Error) => {
      log.error({ err: { type: error.name, message: error.message } }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}
