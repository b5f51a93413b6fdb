import { decodeJwt, decodeProtectedHeader, errors as joseErrors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { FastifyBaseLogger } from 'fastify';
import type { Scope } from '../../../subgraphs/platform/auth/tokens.ts';
import type { VerifiedToken } from '../revocation.ts';
import type { TokenVerifier } from '../token-gate.ts';
import { unauthenticated } from '../../../subgraphs/platform/errors.ts';
import type { AddressPolicy } from '../../../subgraphs/platform/public-address.ts';
import type { IssuerRegistration } from '../issuers.ts';
import { IssuerKeys } from './issuer-keys.ts';
import type { TrustedIssuers } from './trusted-issuers.ts';

/** Asymmetric algorithms only: never `none`, never HMAC (whose "secret" could be the issuer's public key). */
export const USER_TOKEN_ALGORITHMS = ['RS256', 'PS256', 'ES256', 'EdDSA'];
export const CLOCK_SKEW_SECONDS = 60;
const VERIFIED_TOKENS_KEPT = 10_000;
const MAX_USER_ID = 255;

const invalid = () => unauthenticated('The access token is invalid');

/** The one registration the token's issuer and audience name; several (an `aud` list spanning organisations) is refused. */
function registrationOf(registrations: readonly IssuerRegistration[] | undefined, payload: JWTPayload): IssuerRegistration {
  const audiences = typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : [];
  const matching = (registrations ?? []).filter((r) => audiences.includes(r.audience));
  if (matching.length === 1) return matching[0]!;
  if (matching.length > 1) throw unauthenticated('The access token names several audiences trusted for different organisations');
  throw unauthenticated("The access token's issuer is not trusted for its audience");
}

function userIdOf(registration: IssuerRegistration, payload: JWTPayload): string {
  const value = payload[registration.userClaim];
  const id = typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  if (!id || id.length > MAX_USER_ID || id.includes('\u0000')) throw unauthenticated(`The access token lacks a usable '${registration.userClaim}' claim (the user id)`);
  return id;
}

/** The registration's scopes for everyone, and those its map gives the values of its scopes claim (a list, or space-separated). */
function scopesOf(registration: IssuerRegistration, payload: JWTPayload): Scope[] {
  const scopes = new Set(registration.scopes as Scope[]);
  const claim = registration.scopesClaim ? payload[registration.scopesClaim] : undefined;
  const values = typeof claim === 'string' ? claim.split(' ') : Array.isArray(claim) ? claim.filter((v) => typeof v === 'string') : [];
  for (const value of values) for (const scope of registration.scopeMap?.[value] ?? []) scopes.add(scope);
  return [...scopes];
}

async function verifyWith(token: string, getKey: JWTVerifyGetKey, registration: IssuerRegistration) {
  return (await jwtVerify(token, getKey, {
    issuer: registration.issuer, audience: registration.audience, algorithms: USER_TOKEN_ALGORITHMS,
    clockTolerance: CLOCK_SKEW_SECONDS, requiredClaims: ['exp'],
  })).payload;
}

/**
 * End users' tokens from the issuers organisations trust (gateway/auth/issuers.ts). The organisation
 * comes from the registration the token's issuer and audience name, never from a claim. Only a
 * registered issuer's keys are ever fetched. A verified token is remembered until it expires, and
 * its registration looked up again on every use (a distrust refuses it at once).
 */
export function userTokenVerifier(issuers: TrustedIssuers, policy: AddressPolicy, log: FastifyBaseLogger): TokenVerifier {
  const keys = new Map<string, IssuerKeys>();
  const verified = new Map<string, VerifiedToken & { registrationId: string; expiresAt: number }>();
  const keysOf = (issuer: string) => {
    let found = keys.get(issuer);
    if (!found) {
      found = new IssuerKeys(issuer, policy, (error) => log.warn({ issuer, reason: error.message }, 'issuer keys unavailable'));
      keys.set(issuer, found);
    }
    return found;
  };

  async function verify(token: string, registration: IssuerRegistration): Promise<JWTPayload> {
    const issuerKeys = keysOf(registration.issuer);
    try {
      return await verifyWith(token, await issuerKeys.current(), registration);
    } catch (error) {
      if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
      const again = await issuerKeys.refreshed();
      if (!again) throw error;
      return verifyWith(token, again, registration);
    }
  }

  return async (token) => {
    const { byIssuer, byId } = await issuers.current();
    const hit = verified.get(token);
    if (hit && hit.expiresAt > Date.now() && byId.has(hit.registrationId)) return hit;
    let payload: JWTPayload;
    let registration: IssuerRegistration;
    try {
      if (!USER_TOKEN_ALGORITHMS.includes(String(decodeProtectedHeader(token).alg))) throw invalid();
      const claimed = decodeJwt(token);
      registration = registrationOf(typeof claimed.iss === 'string' ? byIssuer.get(claimed.iss) : undefined, claimed);
      payload = await verify(token, registration);
    } catch (error) {
      if (error instanceof joseErrors.JWTExpired) throw unauthenticated('The access token has expired');
      if (error instanceof joseErrors.JOSEError || error instanceof TypeError) throw invalid();
      throw error;
    }
    const caller = { clientId: registration.id, orgId: registration.organisation, scopes: scopesOf(registration, payload), userId: userIdOf(registration, payload) };
    const entry = { caller, generation: null, registrationId: registration.id, expiresAt: payload.exp! * 1000 };
    if (verified.size >= VERIFIED_TOKENS_KEPT) verified.delete(verified.keys().next().value as string);
    verified.set(token, entry);
    return entry;
  };
}
