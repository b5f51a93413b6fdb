import type { GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from './errors.ts';

const CONNECTION_ERRORS = /ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOSPC|Connection terminated|connect ENOENT|database system is (starting|shutting)|No space left on device/;

/**
 * SQLSTATEs that are the caller's input the database could not store (a check that should have
 * refused it earlier, kept as a safety net), and those that mean the database cannot serve now:
 * disk full, out of memory, too many connections, starting up, connection lost.
 */
const INPUT_SQLSTATES = new Set(['22001', '22021', '22P05']);
const UNAVAILABLE_SQLSTATES = new Set(['53100', '53200', '53300', '57P03', '08000', '08001', '08003', '08004', '08006']);

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
  const sqlState = (original as { code?: unknown } | null)?.code;
  if (CONNECTION_ERRORS.test(message) || UNAVAILABLE_SQLSTATES.has(String(sqlState)) || sqlState === 'ENOSPC') {
    log.error({ err: { type: (original as Error)?.name, sqlState, message: message.slice(0, 200) } }, 'database unavailable');
    return { message: 'The database is unavailable; retry shortly', path: formatted.path, extensions: { code: 'SERVICE_UNAVAILABLE' } };
  }
  if (INPUT_SQLSTATES.has(String(sqlState))) {
    log.warn({ err: { type: (original as Error)?.name, sqlState } }, 'input refused by the database');
    return { message: sqlState === '22001' ? 'A value is longer than its field allows' : 'A value contains characters that cannot be stored', path: formatted.path, extensions: { code: 'BAD_USER_INPUT' } };
  }
  // Database errors quote the SQL and its parameters (possibly personal data): log only their kind.
  const isDriverError = original instanceof Error && /Exception$/.test(original.constructor.name) && typeof sqlState === 'string';
  log.error({ err: isDriverError
    ? { type: (original as Error).constructor.name, sqlState }
    : { type: (original as Error)?.name, message: message.slice(0, 200), stack: (original as Error)?.stack?.split('\n').slice(0, 6).join('\n') } }, 'unexpected error');
  return { message: 'Internal server error', path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}
