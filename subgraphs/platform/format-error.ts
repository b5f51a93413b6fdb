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
  // Database errors quote the SQL and its parameters (possibly personal data): log only their kind.
  const sqlState = (original as { code?: unknown } | null)?.code;
  const isDriverError = original instanceof Error && /Exception$/.test(original.constructor.name) && typeof sqlState === 'string';
  log.error({ err: isDriverError
    ? { type: (original as Error).constructor.name, sqlState }
    : { type: (original as Error)?.name, message: message.slice(0, 200), stack: (original as Error)?.stack?.split('\n').slice(0, 6).join('\n') } }, 'unexpected error');
  return { message: 'Internal server error', path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}
