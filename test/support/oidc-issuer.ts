import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** How the issuer's key set endpoint answers: its keys, never, a redirect to loopback, or garbage. */
export type JwksBehaviour = 'keys' | 'hang' | 'redirect' | 'garbage';

export interface TestIssuer {
  /** The issuer URL (http on loopback: OIDC_ALLOW_LOOPBACK=true). */
  url: string;
  behaviour: JwksBehaviour;
  /** Discovery and key set requests answered so far. */
  hits: { discovery: number; jwks: number };
  /** A token signed with the issuer's published key (or `key`), `kid` as published unless given. */
  sign(claims: JWTPayload, options?: { key?: CryptoKey; kid?: string; alg?: string; expiresIn?: string | number }): Promise<string>;
  /** Publishes a new key under `kid` (the old ones stay) and returns its private half. */
  addKey(kid: string): Promise<CryptoKey>;
  publicJwk: JWK;
  close(): Promise<void>;
}

const ALG = 'ES256';

/**
 * A minimal OpenID Connect issuer for the hostile cases (a real one, oidc-provider, signs users in
 * in test/gateway/oidc/spa-sign-in.test.ts): discovery and a key set on a loopback port, tokens
 * signed with jose as an attacker or a provider would.
 */
export async function startTestIssuer(kid = 'key-1'): Promise<TestIssuer> {
  const keys: { kid: string; privateKey: CryptoKey; jwk: JWK }[] = [];
  const add = async (id: string) => {
    const pair = await generateKeyPair(ALG, { extractable: true });
    keys.push({ kid: id, privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid: id, alg: ALG, use: 'sig' } });
    return pair.privateKey;
  };
  await add(kid);
  const held: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    if (request.url === '/.well-known/openid-configuration') {
      issuer.hits.discovery += 1;
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ issuer: issuer.url, jwks_uri: `${issuer.url}/jwks`, id_token_signing_alg_values_supported: [ALG] }));
      return;
    }
    if (request.url !== '/jwks') { response.statusCode = 404; response.end(); return; }
    issuer.hits.jwks += 1;
    switch (issuer.behaviour) {
      case 'hang': held.push(response); return;
      case 'redirect': response.writeHead(302, { location: 'http://127.0.0.1:9/jwks' }).end(); return;
      case 'garbage': response.setHeader('content-type', 'application/json'); response.end('{"keys": "not a list"}'); return;
      default: response.setHeader('content-type', 'application/json'); response.end(JSON.stringify({ keys: keys.map((k) => k.jwk) }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer: TestIssuer = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    behaviour: 'keys',
    hits: { discovery: 0, jwks: 0 },
    publicJwk: keys[0]!.jwk,
    addKey: add,
    async sign(claims, options = {}) {
      return new SignJWT({ iss: issuer.url, ...claims })
        .setProtectedHeader({ alg: options.alg ?? ALG, kid: options.kid ?? keys[0]!.kid, typ: 'JWT' })
        .setIssuedAt()
        .setExpirationTime(options.expiresIn ?? '10m')
        .sign(options.key ?? keys[0]!.privateKey);
    },
    async close() {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return issuer;
}
