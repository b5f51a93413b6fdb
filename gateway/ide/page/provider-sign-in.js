/* global window, crypto, sessionStorage, TextEncoder, TextDecoder, atob, btoa, URLSearchParams */
// Sign-in at an organisation's OpenID provider: authorization code with PKCE (S256), the IDE a public
// client whose redirect URI is this page (`<origin>/graphql`). Only the PKCE verifier, state and nonce
// wait in sessionStorage across the redirect (read once, then removed); the token stays in memory.
// The page's config names each provider's endpoints (the gateway read its discovery document).

const PENDING = 'ide-provider-sign-in';

const base64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes)))
  .replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const random = () => base64url(crypto.getRandomValues(new Uint8Array(32)));
const redirectUri = () => `${window.location.origin}${window.location.pathname}`;

/** A JWT's claims (unverified: the gateway verifies; the page only picks and times the token), or null. */
function claimsOf(jwt) {
  const payload = typeof jwt === 'string' ? jwt.split('.')[1] : undefined;
  if (!payload) return null;
  try {
    const binary = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    return JSON.parse(new TextDecoder().decode(Uint8Array.from(binary, (c) => c.charCodeAt(0))));
  } catch {
    return null;
  }
}
const audiences = (claims) => (Array.isArray(claims?.aud) ? claims.aud : [claims?.aud]);

/** Leaves for the provider's sign-in page. */
export async function startProviderSignIn(provider) {
  const pending = { providerId: provider.id, verifier: random(), state: random(), nonce: random() };
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier));
  const challenge = base64url(digest);
  sessionStorage.setItem(PENDING, JSON.stringify(pending));
  const url = new URL(provider.authorizationEndpoint);
  for (const [name, value] of Object.entries({
    response_type: 'code', client_id: provider.clientId, redirect_uri: redirectUri(), scope: 'openid',
    code_challenge: challenge, code_challenge_method: 'S256', state: pending.state, nonce: pending.nonce,
    resource: provider.audience,
  })) url.searchParams.set(name, value);
  window.location.assign(url.href);
}

/**
 * The provider's answer in this page's URL, taken at once (the URL is cleaned, the pending sign-in
 * removed): null when the URL holds none, else the provider and a `token()` exchanging the code.
 * Throws when the answer is not for the sign-in this tab started (state), or reports an error.
 */
export function takeProviderAnswer(providers) {
  const params = new URLSearchParams(window.location.search);
  if (!params.has('code') && !params.has('error')) return null;
  const pending = JSON.parse(sessionStorage.getItem(PENDING) ?? 'null');
  sessionStorage.removeItem(PENDING);
  window.history.replaceState(null, '', window.location.pathname);
  const provider = providers.find((p) => p.id === pending?.providerId);
  if (!pending || !provider || params.get('state') !== pending.state) {
    throw new Error('the answer does not belong to a sign-in this tab started');
  }
  if (params.has('iss') && params.get('iss') !== provider.issuer) throw new Error('the answer comes from another issuer');
  if (params.has('error')) {
    throw new Error(`${provider.name}: ${params.get('error_description') || params.get('error')}`);
  }
  return { provider, token: () => exchange(provider, params.get('code'), pending) };
}

/**
 * The code exchanged at the token endpoint; the id token's nonce, issuer and audience checked; the token
 * the gateway accepts for the registration's audience returned: the access token when it is a JWT for
 * that audience, else the id token when the audience is the IDE's client id.
 */
async function exchange(provider, code, pending) {
  const response = await fetch(provider.tokenEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code', code, redirect_uri: redirectUri(), client_id: provider.clientId,
      code_verifier: pending.verifier, resource: provider.audience,
    }),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const why = body.error_description || body.error || `the token endpoint answered ${response.status}`;
    throw new Error(`${provider.name}: ${why}`);
  }
  const id = claimsOf(body.id_token);
  const forThisSignIn = id && id.nonce === pending.nonce && id.iss === provider.issuer && audiences(id).includes(provider.clientId);
  if (!forThisSignIn) {
    throw new Error(`${provider.name}: the id token is not for this sign-in (nonce, issuer or audience)`);
  }
  // The gateway refuses a token without an expiry (exp), as the page would not know when to ask again.
  const usable = (t) => audiences(claimsOf(t)).includes(provider.audience) && Number.isFinite(claimsOf(t).exp);
  const token = [body.access_token, body.id_token].find(usable);
  if (!token) throw new Error(`${provider.name} issued no token (with an expiry) for the audience ${provider.audience}`);
  const user = id.email || id.preferred_username || id.sub;
  return { token, user, expiresAt: Number(claimsOf(token).exp) * 1000 };
}
