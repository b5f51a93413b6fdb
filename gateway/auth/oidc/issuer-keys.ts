import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import { AppError } from '../../../subgraphs/platform/errors.ts';
import { parsePublicUrl, type AddressPolicy } from '../../../subgraphs/platform/public-address.ts';
import { fetchIssuerJson, IssuerFetchError } from './public-json.ts';

/** Discovery and key set together, from the first byte asked to the last byte read. */
export const KEYS_TIMEOUT_MS = 5_000;
/** How long fetched keys are used before they are fetched again. */
export const KEYS_MAX_AGE_MS = 10 * 60_000;
/** The least time between two fetches of one issuer's keys: after a failure, and on an unknown `kid`. */
export const KEYS_COOLDOWN_MS = 30_000;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * One issuer's signing keys, from its OpenID discovery document's `jwks_uri`. One fetch at a time
 * (every request waiting for keys shares it), bounded by KEYS_TIMEOUT_MS; keys kept KEYS_MAX_AGE_MS;
 * a failure is remembered for KEYS_COOLDOWN_MS, answered at once meanwhile, and keys fetched before
 * it are used until they can be replaced. Nothing here is awaited by requests of other issuers.
 */
export class IssuerKeys {
  readonly issuer: string;
  private readonly policy: AddressPolicy;
  private readonly onFailure: (error: IssuerFetchError) => void;
  private keys: { getKey: JWTVerifyGetKey; at: number } | null = null;
  private failure: IssuerFetchError | null = null;
  private pending: Promise<JWTVerifyGetKey> | null = null;
  private lastAttempt = -Infinity;
  private readonly now: () => number;

  /** `now`: the clock (tests move it). */
  constructor(issuer: string, policy: AddressPolicy, onFailure: (error: IssuerFetchError) => void, now = Date.now) {
    this.issuer = issuer;
    this.policy = { ...policy, role: 'issuers' };
    this.onFailure = onFailure;
    this.now = now;
  }

  /** The keys to verify with; SERVICE_UNAVAILABLE when none could be had. */
  async current(): Promise<JWTVerifyGetKey> {
    if (this.keys && this.now() - this.keys.at < KEYS_MAX_AGE_MS) return this.keys.getKey;
    if (this.pending) return this.pending;
    if (this.now() - this.lastAttempt < KEYS_COOLDOWN_MS) return this.keys?.getKey ?? this.unavailable();
    return this.load();
  }

  /** After a token named a `kid` the keys lack: fetched again unless they were moments ago (then null). */
  async refreshed(): Promise<JWTVerifyGetKey | null> {
    if (this.pending) return this.pending;
    return this.now() - this.lastAttempt < KEYS_COOLDOWN_MS ? null : this.load();
  }

  private unavailable(): never {
    throw new AppError('SERVICE_UNAVAILABLE', `The signing keys of the access token's issuer cannot be fetched now (${this.failure?.message ?? 'unknown'}); retry later`);
  }

  private load(): Promise<JWTVerifyGetKey> {
    this.lastAttempt = this.now();
    this.pending = this.fetchKeys().then((getKey) => {
      this.keys = { getKey, at: this.now() };
      this.failure = null;
      return getKey;
    }, (error: unknown) => {
      this.failure = error instanceof IssuerFetchError ? error : new IssuerFetchError(`${this.issuer}: ${(error as Error).message}`);
      this.onFailure(this.failure);
      return this.keys?.getKey ?? this.unavailable();
    }).finally(() => { this.pending = null; });
    return this.pending;
  }

  private async fetchKeys(): Promise<JWTVerifyGetKey> {
    const signal = AbortSignal.timeout(KEYS_TIMEOUT_MS);
    const discoveryUrl = `${this.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const discovery = await fetchIssuerJson(discoveryUrl, this.policy, signal);
    // OpenID Connect Discovery 1.0, 4.3: the document names exactly the issuer it was fetched for.
    if (!isObject(discovery) || discovery.issuer !== this.issuer) throw new IssuerFetchError(`${discoveryUrl}: not a discovery document of ${this.issuer}`);
    let jwksUri: URL;
    try {
      jwksUri = parsePublicUrl(discovery.jwks_uri, this.policy, 'jwks_uri');
    } catch (error) {
      throw new IssuerFetchError(`${discoveryUrl}: jwks_uri ${(error as Error).message}`);
    }
    const jwks = await fetchIssuerJson(jwksUri.href, this.policy, signal);
    try {
      return createLocalJWKSet(jwks as JSONWebKeySet);
    } catch {
      throw new IssuerFetchError(`${jwksUri.href}: not a JSON Web Key Set`);
    }
  }
}
