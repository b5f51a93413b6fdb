/**
 * A real OpenID provider for browser sign-ins (oidc-provider, the certified implementation) on a
 * loopback port: public clients doing authorization code + PKCE, JWT access tokens for one resource
 * (RFC 8707), any login accepted by its development interactions (login, then consent).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import type { Page } from 'playwright-core';

export interface ProviderClient { clientId: string; redirectUri: string }
export interface TestProvider { issuer: string; close(): void }

async function signingKey() {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid: 'provider-key', alg: 'RS256', use: 'sig' };
}

/** The provider, its clients' origins allowed by CORS; lifetimes set (oidc-provider notices their defaults otherwise). */
export async function startOidcProvider(clients: ProviderClient[], resource: string, accessTokenTtl = 600): Promise<TestProvider> {
  const server: Server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const origins = new Set(clients.map((c) => new URL(c.redirectUri).origin));
  const oidc = new Provider(issuer, {
    clients: clients.map((c) => ({
      client_id: c.clientId, token_endpoint_auth_method: 'none', redirect_uris: [c.redirectUri],
      grant_types: ['authorization_code'], response_types: ['code'],
    })),
    findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    clientBasedCORS: (_ctx, origin) => origins.has(origin),
    ttl: { AccessToken: accessTokenTtl, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    features: {
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: 'openid', audience: resource, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }),
      },
    },
    jwks: { keys: [await signingKey()] },
  });
  server.on('request', oidc.callback());
  return {
    issuer,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Signs in on the provider's own pages as `login` (any password), then consents. */
export async function signInAtProvider(page: Page, login: string) {
  await page.waitForSelector('input[name="login"]', { timeout: 20_000 });
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', 'any');
  await page.click('button[type="submit"]');
  await page.waitForSelector('button:has-text("Continue")', { timeout: 20_000 });
  await page.click('button:has-text("Continue")');
}
