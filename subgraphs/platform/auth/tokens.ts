import { SignJWT, jwtVerify, errors as joseErrors, type CryptoKey } from 'jose';
import { unauthenticated, forbidden } from '../errors.ts';
import { JWT_ALG } from './keys.ts';

export const TOKEN_LIFETIME_SECONDS = 3600;
/** `admin` (operating API clients) is granted only to a token that asks for it, never by default. */
export const SCOPES = ['b2b', 'roadside', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Who is calling: the client, its organisation (tenant) and the scopes its token grants. An end
 * user signed in at the organisation's OpenID provider is `userId` (the issuer's claim, never
 * logged as such), and `clientId` is then the issuer registration's id.
 */
export interface Caller {
  clientId: string;
  orgId: string;
  scopes: Scope[];
  userId?: string;
  /** A sandbox organisation's client (claim `sbx`): answers say so, events are marked, see docs/sandbox.md. */
  sandbox?: true;
}

/** The `sbx` claim of a sandbox caller, nothing otherwise. */
export const sandboxClaim = (caller: Caller) => (caller.sandbox ? { sbx: true } : {});
/** The caller's `sandbox` from a token's claims. */
export const sandboxOf = (claims: Record<string, unknown>) => (claims.sbx === true ? { sandbox: true as const } : {});

/** The known scopes of a space-separated `scope` claim. */
export const scopesOf = (scope: string) => scope.split(' ').filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));

/** `generation` is the client's secret generation when the token is issued (claim `gen`), see revocation.ts. */
export async function issueToken(caller: Caller, generation: number, privateKey: CryptoKey, issuer: string, now = Math.floor(Date.now() / 1000)) {
  return new SignJWT({ org: caller.orgId, scope: caller.scopes.join(' '), gen: generation, ...sandboxClaim(caller) })
    .setProtectedHeader({ alg: JWT_ALG, typ: 'JWT' })
    .setSubject(caller.clientId)
    .setIssuer(issuer)
    .setAudience(issuer)
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime(now + TOKEN_LIFETIME_SECONDS)
    .setJti(crypto.randomUUID())
    .sign(privateKey);
}

/** Reads the bearer token out of an Authorization header value; null when absent. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+([A-Za-z0-9._~+/=-]+)\s*$/i.exec(header);
  if (!m) throw unauthenticated('The Authorization header must be "Bearer <access_token>"');
  return m[1];
}

/** Verifies signature, algorithm, issuer, audience and lifetime; any failure is UNAUTHENTICATED. */
export async function verifyToken(token: string, publicKey: CryptoKey, issuer: string): Promise<Caller> {
  try {
    const { payload } = await jwtVerify(token, publicKey, { algorithms: [JWT_ALG], issuer, audience: issuer });
    if (typeof payload.sub !== 'string' || typeof payload.org !== 'string' || typeof payload.scope !== 'string') {
      throw unauthenticated('The access token is missing required claims');
    }
    return { clientId: payload.sub, orgId: payload.org, scopes: scopesOf(payload.scope), ...sandboxOf(payload) };
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw unauthenticated('The access token has expired');
    if (error instanceof joseErrors.JOSEError) throw unauthenticated('The access token is invalid');
    throw error;
  }
}

/** The caller, or UNAUTHENTICATED/FORBIDDEN when there is none or it lacks `scope`. */
export function requireScope(caller: Caller | null, scope: Scope): Caller {
  if (!caller) throw unauthenticated();
  if (!caller.scopes.includes(scope)) throw forbidden(`The access token lacks the '${scope}' scope`);
  return caller;
}
