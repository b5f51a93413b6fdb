import type { EntityManager } from '@mikro-orm/core';
import type { FastifyBaseLogger as Logger } from 'fastify';
import { TENANT_FILTER } from './db/tenant.ts';
import { bearerToken, type Caller, type TokenVerifier } from './auth/tokens.ts';
import type { AppError } from './errors.ts';

/** What every resolver receives: who calls, a request-scoped EntityManager and DataLoaders. */
export interface SubgraphContext<Loaders = unknown> {
  requestId: string;
  caller: Caller | null;
  /** Set when a token was sent but could not be verified; raised by the scope guard. */
  authError: AppError | null;
  em: EntityManager;
  loaders: Loaders;
  log: Logger;
}

export interface ContextDeps<Loaders> {
  em: EntityManager;
  /** Verifies bearer tokens (cached per subgraph). */
  verify: TokenVerifier;
  createLoaders: (em: EntityManager, caller: Caller | null) => Loaders;
}

/** A request's logger, or how to make it: a child logger costs its bindings' serialisation, often for nothing. */
export type LoggerSource = Logger | (() => Logger);

/**
 * Builds one request's context: verifies the token and forks the EntityManager into the caller's
 * organisation. The DataLoaders and the logger are made on first use: most requests log nothing,
 * and an entity fetch or a field that reads no row uses no loader.
 */
export async function createContext<Loaders>(
  deps: ContextDeps<Loaders>, authorization: string | undefined, requestId: string, logger: LoggerSource,
): Promise<SubgraphContext<Loaders>> {
  let caller: Caller | null = null;
  let authError: AppError | null = null;
  try {
    const token = bearerToken(authorization);
    if (token) caller = (await deps.verify(token)).caller;
  } catch (error) {
    authError = error as AppError;
  }
  const em = deps.em.fork({ clear: true, useContext: false });
  if (caller) em.setFilterParams(TENANT_FILTER, { orgId: caller.orgId });
  let loaders: Loaders | undefined;
  let log = typeof logger === 'function' ? undefined : logger;
  return {
    requestId, caller, authError, em,
    get loaders() { return loaders ??= deps.createLoaders(em, caller); },
    get log() { return log ??= (logger as () => Logger)(); },
  };
}
