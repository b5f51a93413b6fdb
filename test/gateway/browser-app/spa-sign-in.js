/* global document, window, crypto, sessionStorage, TextEncoder, btoa, URLSearchParams */
/**
 * A single-page app as a frontend team writes it against the graph with its users' own sign-in:
 * authorization code with PKCE (S256) at the organisation's OpenID provider, no client secret, then
 * Apollo Client 4 with the user's access token. Bundled by esbuild in test/gateway/oidc/spa-sign-in.test.ts;
 * reads its settings (issuer, clientId, resource, graphqlUrl, userId) from the page's #config element.
 */
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';

const config = JSON.parse(document.getElementById('config').textContent);
const show = (id, text) => { document.getElementById(id).textContent = text; };
const state = (value) => { document.body.dataset.state = value; };
const base64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
const redirectUri = `${window.location.origin}/callback`;

async function discovery() {
  const response = await fetch(`${config.issuer}/.well-known/openid-configuration`);
  return response.json();
}

async function signIn() {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  const expected = base64url(crypto.getRandomValues(new Uint8Array(16)));
  sessionStorage.setItem('pkce', JSON.stringify({ verifier, state: expected }));
  const url = new URL((await discovery()).authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code', client_id: config.clientId, redirect_uri: redirectUri, scope: 'openid',
    code_challenge: challenge, code_challenge_method: 'S256', state: expected, resource: config.resource,
  }).toString();
  window.location.assign(url.href);
}

async function callback(params) {
  const saved = JSON.parse(sessionStorage.getItem('pkce') ?? '{}');
  sessionStorage.removeItem('pkce');
  if (!saved.verifier || params.get('state') !== saved.state) throw new Error('sign-in state mismatch');
  const response = await fetch((await discovery()).token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code', code: params.get('code'), redirect_uri: redirectUri,
      client_id: config.clientId, code_verifier: saved.verifier, resource: config.resource,
    }),
  });
  const tokens = await response.json();
  if (!tokens.access_token) throw new Error(`token endpoint: ${tokens.error ?? response.status}`);
  window.history.replaceState(null, '', '/');
  return tokens.access_token;
}

const DRIVER = gql`
  query Driver($userId: ID!) {
    user(userId: $userId) { id userId homeZip }
  }`;

async function main() {
  const params = new URLSearchParams(window.location.search);
  if (!params.has('code')) {
    document.getElementById('sign-in').addEventListener('click', () => { signIn().catch(fail); });
    state('signed-out');
    return;
  }
  const accessToken = await callback(params);
  const client = new ApolloClient({
    link: new HttpLink({ uri: config.graphqlUrl, headers: { authorization: `Bearer ${accessToken}` } }),
    cache: new InMemoryCache(),
  });
  const { data, error } = await client.query({ query: DRIVER, variables: { userId: config.userId } });
  if (error) throw error;
  show('home-zip', data.user?.homeZip ?? 'not found');
  state('ready');
}

function fail(error) {
  show('error', error.message);
  state('error');
}

main().catch(fail);
