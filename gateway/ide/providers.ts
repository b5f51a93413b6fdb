/**
 * The OpenID providers the IDE offers "Sign in with": the trusted issuer registrations that name the
 * IDE's public client id (`npm run issuers -- trust ... --ide-client-id`), each with the authorization
 * and token endpoints of its discovery document. The gateway reads that document (under the issuers'
 * address rules, as for their keys) so that the page's policy can name the one origin the page posts
 * to (the token endpoint) and the page fetches nothing else from the provider. Nothing here is secret.
 */
import type { FastifyBaseLogger } from 'fastify';
import { parsePublicUrl, type AddressPolicy } from '../../subgraphs/platform/public-address.ts';
import type { IssuerRegistration } from '../auth/issuers.ts';
import { KEYS_COOLDOWN_MS, KEYS_MAX_AGE_MS, KEYS_TIMEOUT_MS } from '../auth/oidc/issuer-keys.ts';
import { fetchIssuerJson } from '../auth/oidc/public-json.ts';
import type { TrustedIssuers } from '../auth/oidc/trusted-issuers.ts';

/** What the page needs to sign in at one provider. */
export interface IdeProvider {
  /** The registration's id: which provider a sign-in coming back from its redirect was for. */
  id: string;
  name: string;
  issuer: string;
  clientId: string;
  /** The audience the gateway accepts its tokens for: asked for as the `resource` (RFC 8707). */
  audience: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
}

interface Endpoints { authorizationEndpoint: string; tokenEndpoint: string }
interface Known { endpoints: Endpoints | null; at: number; pending?: Promise<Endpoints | null> }

/**
 * Each provider's endpoints, kept as long as an issuer's keys (KEYS_MAX_AGE_MS); a provider whose
 * document cannot be had is left off the page, and asked again after KEYS_COOLDOWN_MS. A page waits
 * for a provider's first read at most KEYS_TIMEOUT_MS.
 */
export function ideProviders(trusted: TrustedIssuers, policy: AddressPolicy, log: FastifyBaseLogger) {
  const rules = { ...policy, role: 'issuers' };
  const known = new Map<string, Known>();

  async function read(issuer: string): Promise<Endpoints | null> {
    try {
      const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
      const signal = AbortSignal.timeout(KEYS_TIMEOUT_MS);
      const document = await fetchIssuerJson(url, rules, signal) as Record<string, unknown> | null;
      if (document?.issuer !== issuer) throw new Error(`${url}: not a discovery document of ${issuer}`);
      const endpoint = (field: string) => parsePublicUrl(document[field], rules, field).href;
      return { authorizationEndpoint: endpoint('authorization_endpoint'), tokenEndpoint: endpoint('token_endpoint') };
    } catch (error) {
      log.warn({ issuer, reason: (error as Error).message }, 'the IDE cannot offer sign-in with this issuer');
      return null;
    }
  }

  function endpoints(issuer: string): Promise<Endpoints | null> {
    const entry = known.get(issuer);
    const maxAge = entry?.endpoints ? KEYS_MAX_AGE_MS : KEYS_COOLDOWN_MS;
    if (entry?.pending) return entry.pending;
    if (entry && Date.now() - entry.at < maxAge) return Promise.resolve(entry.endpoints);
    const next: Known = { endpoints: entry?.endpoints ?? null, at: Date.now() };
    next.pending = read(issuer).then((found) => {
      known.set(issuer, { endpoints: found ?? next.endpoints, at: Date.now() });
      return found ?? next.endpoints;
    });
    known.set(issuer, next);
    return next.pending;
  }

  const provider = async (r: IssuerRegistration): Promise<IdeProvider | null> => {
    const found = await endpoints(r.issuer);
    if (!found || !r.ideClientId) return null;
    const name = r.ideName ?? new URL(r.issuer).host;
    return { id: r.id, name, issuer: r.issuer, clientId: r.ideClientId, audience: r.audience, ...found };
  };

  /** The providers to offer now: none when the registrations cannot be read. */
  return async (): Promise<IdeProvider[]> => {
    const registrations = await trusted.current().then(({ byId }) => [...byId.values()], () => []);
    const offered = await Promise.all(registrations.filter((r) => r.ideClientId).map(provider));
    return offered.filter((p): p is IdeProvider => p !== null).sort((a, b) => a.name.localeCompare(b.name));
  };
}
