import { trace } from '@opentelemetry/api';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { userHash } from '../../subgraphs/platform/auth/caller-key.ts';
import { bearerToken, type Caller, type TokenVerifier } from '../../subgraphs/platform/auth/tokens.ts';
import type { RevocationCheck } from '../../subgraphs/platform/auth/revocation.ts';
import { AppError } from '../../subgraphs/platform/errors.ts';

/** An end user's request names its user in its log lines and trace as a digest only (a `sub` may be an e-mail address). */
function identifyUser(request: FastifyRequest, registrationId: string, userId: string) {
  const user = userHash(registrationId, userId);
  request.log = request.log.child({ issuerRegistration: registrationId, user });
  trace.getActiveSpan()?.setAttributes({ 'enduser.pseudo.id': user, 'app.issuer_registration': registrationId });
}

/**
 * Checks a presented bearer token at the edge with the verifier every subgraph uses too: signature,
 * lifetime, and revocation (the client exists, is enabled, and the token carries its current secret
 * generation).
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
          if (caller?.userId !== undefined) identifyUser(request, caller.clientId, caller.userId);
        } catch (error) {
          if (error instanceof AppError) return onError(request, reply, error);
          throw error;
        }
      },
  };
}
