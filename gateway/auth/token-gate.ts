import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CryptoKey } from 'jose';
import { bearerToken, cachedTokenVerifier, type Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { AppError, unauthenticated } from '../../subgraphs/platform/errors.ts';
import type { ClientStore } from './clients.ts';

const CLIENT_CACHE_MS = 5_000;

interface ClientState { disabled: boolean; rotatedAt: number; until: number }

/**
 * Checks a presented bearer token at the edge: signature and lifetime (as every subgraph does again),
 * and that its client still exists, is enabled and has not rotated its secret since the token was
 * issued. Client state is cached for a few seconds, verified tokens until they expire.
 */
export function createTokenGate(clients: ClientStore, publicKey: CryptoKey, issuer: string) {
  const clientCache = new Map<string, ClientState>();
  const verify = cachedTokenVerifier(publicKey, issuer);

  async function clientState(clientId: string): Promise<ClientState | null> {
    const cached = clientCache.get(clientId);
    if (cached && cached.until > Date.now()) return cached;
    const client = await clients.find(clientId);
    if (!client) { clientCache.delete(clientId); return null; }
    const state = { disabled: client.disabled, rotatedAt: Math.floor(client.secretRotatedAt.getTime() / 1000), until: Date.now() + CLIENT_CACHE_MS };
    clientCache.set(clientId, state);
    return state;
  }

  /** The caller of a valid token, null without one; throws UNAUTHENTICATED for a bad one. */
  async function check(authorization: string | undefined): Promise<Caller | null> {
    const token = bearerToken(authorization);
    if (!token) return null;
    const { caller, issuedAt } = await verify(token);
    const state = await clientState(caller.clientId);
    if (!state || state.disabled) throw unauthenticated('The client of this access token is unknown or disabled');
    if (issuedAt < state.rotatedAt) throw unauthenticated('The access token was issued before the client secret was rotated');
    return caller;
  }

  return {
    check,
    /** Forgets cached client state (after a rotation or a disable in this process). */
    forget(clientId: string) { clientCache.delete(clientId); },
    hook: (onError: (request: FastifyRequest, reply: FastifyReply, error: AppError) => unknown) =>
      async (request: FastifyRequest, reply: FastifyReply) => {
        try {
          (request as FastifyRequest & { caller?: Caller | null }).caller = await check(request.headers.authorization);
        } catch (error) {
          if (error instanceof AppError) return onError(request, reply, error);
          throw error;
        }
      },
  };
}
