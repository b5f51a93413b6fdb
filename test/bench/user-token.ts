import { startTestIssuer } from '../support/oidc-issuer.ts';
import type { BenchClient } from './protocol.ts';

/**
 * Scenario `user-token`: an OpenID Connect issuer on loopback (test/support/oidc-issuer.ts), trusted
 * for the bench organisation through the admin API, and one end user's token from it (an hour).
 */
export async function benchEndUser(gateway: string, client: BenchClient) {
  const issuer = await startTestIssuer();
  const tokenResponse = await fetch(`${gateway}/platform/oauth/v1/token`, {
    method: 'POST', body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret, scope: 'admin' }),
  });
  const admin = (await tokenResponse.json() as { access_token: string }).access_token;
  const trusted = await fetch(`${gateway}/platform/admin/v1/issuers`, {
    method: 'POST', headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ issuer: issuer.url, organisation: client.org, audience: 'bench-graph' }),
  });
  if (trusted.status !== 201) throw new Error(`trusting the bench issuer failed: ${trusted.status} ${await trusted.text()}`);
  return { token: await issuer.sign({ sub: 'bench-user@example.com', aud: 'bench-graph' }, { expiresIn: '1h' }), close: () => issuer.close() };
}
