import type { GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from './errors.ts';

const CONNECTION_ERRORS = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|Connection terminated|connect ENOENT|database system is (starting|shutting)/;

/**
 * Domain errors and GraphQL's own validation errors go out as they are. Anything else is a bug or
 * an outage: it is logged (without data) and answered with a generic message that leaks no SQL.
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown, log: FastifyBaseLogger): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (original instanceof AppError) return formatted;
  const code = formatted.extensions?.code;
  if (code && code !== 'INTERNAL_SERVER_ERROR') return formatted;
  const message = original instanceof Error ? original.message : String(original);
  if (CONNECTION_ERRORS.test(message)) {
    log.error({ err: { type: (original as Error)?.name, message } }, 'database unavailable');
    return { message: 'The database is unavailable; retry shortly', path: formatted.path, extensions: { code: 'SERVICE_UNAVAILABLE' } };
  }
  log.error({ err: { type: (original as Error)?.name, message: message.slice(0, 200), stack: (original as Error)?.stack } }, 'unexpected error');
  return { message: 'Internal server error', path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}
