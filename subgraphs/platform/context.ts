import type { EntityManager } from '@mikro-orm/core';
import type { FastifyBaseLogger as Logger } from 'fastify';
import { decodeJwt, type CryptoKey } from 'jose';
import { TENANT_FILTER } from './db/tenant.ts';
import { bearerToken, verifyToken, type Caller } from './auth/tokens.ts';
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
  publicKey: CryptoKey;
  issuer: string;
  createLoaders: (em: EntityManager, caller: Caller | null) => Loaders;
}

const VERIFIED_TOKENS_KEPT = 10_000;
/** Per subgraph (its deps): tokens whose signature, issuer and audience were verified, kept until they expire. */
const verifiedTokens = new WeakMap<object, Map<string, { caller: Caller; expiresAt: number }>>();

/** verifyToken, remembered until the token's expiry: a client sends the same token for an hour. */
async function verifiedCaller(deps: ContextDeps<unknown>, token: string): Promise<Caller> {
  let cache = verifiedTokens.get(deps);
  if (!cache) verifiedTokens.set(deps, cache = new Map());
  const hit = cache.get(token);
  if (hit && hit.expiresAt > Date.now()) return hit.caller;
  const caller = await verifyToken(token, deps.publicKey, deps.issuer);
  const { exp } = decodeJwt(token);
  if (typeof exp === 'number') {
    if (cache.size >= VERIFIED_TOKENS_KEPT) cache.delete(cache.keys().next().value as string);
    cache.set(token, { caller, expiresAt: exp * 1000 });
  }
  return caller;
}

/** Builds one request's context: verifies the token and forks the EntityManager into the caller's organisation. */
export async function createContext<Loaders>(
  deps: ContextDeps<Loaders>, authorization: string | undefined, requestId: string, log: Logger,
): Promise<SubgraphContext<Loaders>> {
  let caller: Caller | null = null;
  let authError: AppError | null = null;
  try {
    const token = bearerToken(authorization);
    if (token) caller = await verifiedCaller(deps as ContextDeps<unknown>, token);
  } catch (error) {
    authError = error as AppError;
  }
  const em = deps.em.fork({ clear: true, useContext: false });
  if (caller) em.setFilterParams(TENANT_FILTER, { orgId: caller.orgId });
  return { requestId, caller, authError, em, loaders: deps.createLoaders(em, caller), log };
}
