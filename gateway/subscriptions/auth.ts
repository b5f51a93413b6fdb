import { decodeJwt } from 'jose';
import { bearerToken, type Caller } from '../../subgraphs/platform/auth/tokens.ts';
import type { TokenVerifier } from '../auth/token-gate.ts';
import { AppError, unauthenticated } from '../../subgraphs/platform/errors.ts';

/** Who holds a subscription: the token's caller, the header its queries carry, and when the token expires. */
export interface Subscriber {
  caller: Caller;
  authorization: string;
  /** Milliseconds since the epoch. */
  expiresAt: number;
}

/** The Authorization value of graphql-ws's `connection_init` payload: `authorization` or `Authorization`. */
export function connectionAuthorization(payload: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const value = payload?.authorization ?? payload?.Authorization;
  return typeof value === 'string' ? value : undefined;
}

/**
 * Subscribers are checked with the token gate's verifier (signature, lifetime, revocation: the client
 * exists, is enabled and the token carries its current secret generation), when they connect and
 * again before every event and on a timer. Failures throw UNAUTHENTICATED.
 */
export function subscriberAuth(verify: TokenVerifier) {
  return {
    async authenticate(authorization: string | undefined): Promise<Subscriber> {
      const token = bearerToken(authorization);
      if (!token) throw unauthenticated('A bearer token is required: send { "authorization": "Bearer <access_token>" }');
      const { caller } = await verify(token);
      return { caller, authorization: authorization!, expiresAt: (decodeJwt(token).exp ?? 0) * 1000 };
    },
    async recheck(subscriber: Subscriber): Promise<void> {
      if (subscriber.expiresAt <= Date.now()) throw unauthenticated('The access token has expired');
      await verify(bearerToken(subscriber.authorization)!);
    },
  };
}
export type SubscriberAuth = ReturnType<typeof subscriberAuth>;

/** A failed token check (expired, invalid, revoked), as against one that could not be made (a database down). */
export const isUnauthenticated = (error: unknown) => error instanceof AppError && error.code === 'UNAUTHENTICATED';
