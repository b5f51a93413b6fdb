import type { EntityManager } from '@mikro-orm/core';
import type { FastifyBaseLogger as Logger } from 'fastify';
import { TENANT_FILTER } from './db/tenant.ts';
import { bearerToken, type Caller } from './auth/tokens.ts';
import type { InternalTokenVerifier } from './auth/internal-token.ts';
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
  /** Verifies the gateway's internal tokens (cached per subgraph). */
  verify: InternalTokenVerifier;
  createLoaders: (em: EntityManager, caller: Caller | null) => Loaders;
}

/** A request's logger, or how to make it: a child logger costs its bindings' serialisation, often for nothing. */
export type LoggerSource = Logger | (() => Logger);

/**
 * Builds one request's context: verifies the gateway's internal token (`authorization` is
 * `Bearer <internal token>`, or absent for an anonymous caller) and forks the EntityManager into the caller's
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
    if (token) caller = await deps.verify(token);
  } catch (error) {
    authError = error as AppError;
  }
  const em = deps.em.fork({ clear: true, useContext: false });
  if (caller) em.setFilterParams(TENANT_FILTER, { orgId: caller.orgId, sandbox: caller.sandbox === true });
  return new RequestContext(requestId, caller, authError, em, deps.createLoaders, logger);
}

/**
 * The lazy parts are getters of the class, their state plain own properties: Apollo Server copies
 * the context of every HTTP request (Object.assign onto an object of the same prototype), which
 * would call getters defined on the object itself, and make each lazy part on every request.
 */
class RequestContext<Loaders> implements SubgraphContext<Loaders> {
  readonly requestId: string;
  readonly caller: Caller | null;
  readonly authError: AppError | null;
  readonly em: EntityManager;
  readonly createLoaders: ContextDeps<Loaders>['createLoaders'];
  logger: LoggerSource;
  made?: Loaders;

  constructor(requestId: string, caller: Caller | null, authError: AppError | null, em: EntityManager, createLoaders: ContextDeps<Loaders>['createLoaders'], logger: LoggerSource) {
    this.requestId = requestId;
    this.caller = caller;
    this.authError = authError;
    this.em = em;
    this.createLoaders = createLoaders;
    this.logger = logger;
  }

  get loaders() { return this.made ??= this.createLoaders(this.em, this.caller); }

  get log() {
    if (typeof this.logger === 'function') this.logger = this.logger();
    return this.logger;
  }
}
