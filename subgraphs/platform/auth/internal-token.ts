/**
 * The internal token: the gateway's signed word to one subgraph of who calls, made after its own checks of
 * the caller's access token (signature, lifetime, revocation). A subgraph verifies it with the gateway's
 * public key alone: it never verifies a client's token nor reads the gateway's clients. An EdDSA JWT of
 * type `internal+jwt`, issuer JWT_ISSUER, audience the one subgraph it is for, valid 60 s; claims: `sub`
 * the client, `org`, `scope` (space-separated), `uid` when the caller is a user and `sbx` for a sandbox client. It travels as
 * `Authorization: Bearer` on the hop, in-process and over HTTP alike.
 */
import { SignJWT, jwtVerify, errors as joseErrors, type CryptoKey, type JWTPayload } from 'jose';
import { unauthenticated } from '../errors.ts';
import { JWT_ALG } from './keys.ts';
import { sandboxClaim, sandboxOf, scopesOf, type Caller } from './tokens.ts';

export const INTERNAL_TOKEN_LIFETIME_SECONDS = 60;
const TYPE = 'internal+jwt';
const KEPT = 10_000;

export const internalAudience = (subgraph: string) => `subgraph:${subgraph}`;

/** The caller as claims, and back: the one place a claim is added. */
const claimsOf = (caller: Caller): JWTPayload =>
  ({ org: caller.orgId, scope: caller.scopes.join(' '), ...(caller.userId === undefined ? {} : { uid: caller.userId }), ...sandboxClaim(caller) });

function callerOf({ sub, org, scope, uid, sbx }: JWTPayload): Caller {
  if (typeof sub !== 'string' || typeof org !== 'string' || typeof scope !== 'string' || !['string', 'undefined'].includes(typeof uid)) {
    throw unauthenticated('The internal token is missing required claims');
  }
  return { clientId: sub, orgId: org, scopes: scopesOf(scope), ...(typeof uid === 'string' ? { userId: uid } : {}), ...sandboxOf({ sbx }) };
}

export interface InternalTokenOptions {
  issuer: string;
  /** Seconds since the epoch (tests make expired tokens). */
  now?: number;
  lifetimeSeconds?: number;
}

/** One internal token for `subgraph`. */
export function signInternalToken(caller: Caller, subgraph: string, privateKey: CryptoKey, options: InternalTokenOptions) {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  return new SignJWT(claimsOf(caller))
    .setProtectedHeader({ alg: JWT_ALG, typ: TYPE })
    .setSubject(caller.clientId)
    .setIssuer(options.issuer)
    .setAudience(internalAudience(subgraph))
    .setIssuedAt(now)
    .setExpirationTime(now + (options.lifetimeSeconds ?? INTERNAL_TOKEN_LIFETIME_SECONDS))
    .sign(privateKey);
}

/** The gateway's: an internal token for a caller it has checked and a subgraph. */
export type InternalTokenMinter = (caller: Caller, subgraph: string) => Promise<string>;

/** Signs internal tokens, each reused for the same caller and subgraph until half its lifetime is left. */
export function internalTokenMinter(privateKey: CryptoKey, issuer: string): InternalTokenMinter {
  const minted = new Map<string, { token: Promise<string>; renewAt: number }>();
  return (caller, subgraph) => {
    const key = JSON.stringify([subgraph, caller.clientId, caller.orgId, caller.scopes, caller.userId, caller.sandbox]);
    const hit = minted.get(key);
    if (hit && hit.renewAt > Date.now()) return hit.token;
    const token = signInternalToken(caller, subgraph, privateKey, { issuer });
    if (minted.size >= KEPT) minted.clear();
    minted.set(key, { token, renewAt: Date.now() + INTERNAL_TOKEN_LIFETIME_SECONDS * 500 });
    token.catch(() => minted.delete(key));
    return token;
  };
}

/** A subgraph's: the caller of a valid internal token; UNAUTHENTICATED otherwise. */
export type InternalTokenVerifier = (token: string) => Promise<Caller>;

/**
 * Verifies signature, type, issuer, audience (this subgraph) and lifetime, allowing `clockToleranceSeconds`
 * between the gateway's clock and this one; a verified token is remembered until it expires.
 */
export function internalTokenVerifier(
  publicKey: CryptoKey, issuer: string, subgraph: string, clockToleranceSeconds: number,
): InternalTokenVerifier {
  const verified = new Map<string, { caller: Caller; until: number }>();
  const options = { algorithms: [JWT_ALG], typ: TYPE, issuer, audience: internalAudience(subgraph), clockTolerance: clockToleranceSeconds };
  return async (token) => {
    const hit = verified.get(token);
    if (hit && hit.until > Date.now()) return hit.caller;
    try {
      const { payload } = await jwtVerify(token, publicKey, options);
      const caller = callerOf(payload);
      if (verified.size >= KEPT) verified.clear();
      verified.set(token, { caller, until: (payload.exp ?? 0) * 1000 });
      return caller;
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw unauthenticated('The internal token has expired');
      if (error instanceof joseErrors.JOSEError) throw unauthenticated('This service accepts only the gateway\'s internal token for this service');
      throw error;
    }
  };
}
