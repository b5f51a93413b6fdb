import { trace } from '@opentelemetry/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { userHash } from '../../subgraphs/platform/auth/caller-key.ts';
import { decodeJwt, type CryptoKey } from 'jose';
import { bearerToken, verifyToken, type Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { AppError } from '../../subgraphs/platform/errors.ts';
import type { RevocationCheck, VerifiedToken } from './revocation.ts';

/** The header on every answer to a sandbox client's token. */
export const SANDBOX_HEADER = 'x-sandbox';

export type TokenVerifier = (token: string) => Promise<VerifiedToken>;

const VERIFIED_TOKENS_KEPT = 10_000;

/** An end user's request names its user in its log lines and trace as a digest only (a `sub` may be an e-mail address). */
function identifyUser(request: FastifyRequest, reply: FastifyReply, registrationId: string, userId: string) {
  const user = userHash(registrationId, userId);
  // The reply's logger too: it writes the request's closing line.
  request.log = request.log.child({ issuerRegistration: registrationId, user });
  reply.log = request.log;
  trace.getActiveSpan()?.setAttributes({ 'enduser.pseudo.id': user, 'app.issuer_registration': registrationId });
}

/**
 * verifyToken, remembered until the token expires (a client sends the same token for an hour),
 * then on every call the revocation check (the client's status, cached for a bounded time).
 * Failures are never remembered; the oldest entry goes when the cache is full.
 */
export function cachedTokenVerifier(publicKey: CryptoKey, issuer: string, revocation: RevocationCheck): TokenVerifier {
  const cache = new Map<string, VerifiedToken & { expiresAt: number }>();
  const verified = async (token: string) => {
    const hit = cache.get(token);
    if (hit && hit.expiresAt > Date.now()) return hit;
    const caller = await verifyToken(token, publicKey, issuer);
    const { exp = 0, gen } = decodeJwt(token);
    const entry = { caller, generation: Number.isSafeInteger(gen) ? gen as number : null, expiresAt: exp * 1000 };
    if (cache.size >= VERIFIED_TOKENS_KEPT) cache.delete(cache.keys().next().value as string);
    cache.set(token, entry);
    return entry;
  };
  return async (token) => {
    const entry = await verified(token);
    await revocation.check(entry);
    return entry;
  };
}

/**
 * Checks a presented access token at the edge, the only place client tokens are checked: signature,
 * lifetime, and revocation (the client exists, is enabled, and the token carries its current secret
 * generation). Subgraphs receive the caller in the gateway's internal token instead.
 */
export function createTokenGate(verify: TokenVerifier, revocation: RevocationCheck) {
  /** The caller of a valid token, null without one; throws UNAUTHENTICATED for a bad one. */
  async function check(authorization: string | undefined): Promise<Caller | null> {
    const token = bearerToken(authorization);
    return token ? (await verify(token)).caller : null;
  }

  return {
    check,
    /** Forgets cached client state (after a rotation or a disable in this process). */
    forget(clientId: string) { revocation.forget(clientId); },
    hook: (onError: (request: FastifyRequest, reply: FastifyReply, error: AppError) => unknown) =>
      async (request: FastifyRequest, reply: FastifyReply) => {
        try {
          const caller = await check(request.headers.authorization);
          (request as FastifyRequest & { caller?: Caller | null }).caller = caller;
          if (caller?.userId !== undefined) identifyUser(request, reply, caller.clientId, caller.userId);
          // Every answer to a sandbox token says so, errors included (docs/sandbox.md).
          if (caller?.sandbox) reply.header(SANDBOX_HEADER, 'true');
        } catch (error) {
          if (error instanceof AppError) return onError(request, reply, error);
          throw error;
        }
      },
  };
}
