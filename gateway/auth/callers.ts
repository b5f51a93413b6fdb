import { decodeJwt } from 'jose';
import type { TokenVerifier } from './token-gate.ts';
import { unauthenticated } from '../../subgraphs/platform/errors.ts';

/**
 * The gateway's one verifier of bearer tokens: its own (client credentials) by their issuer, every
 * other one as an end user's token from an issuer an organisation trusts. The unverified `iss` only
 * picks the verifier; each checks everything itself.
 */
export function callerVerifier(ownIssuer: string, clientTokens: TokenVerifier, userTokens: TokenVerifier): TokenVerifier {
  return async (token) => {
    let issuer: unknown;
    try {
      issuer = decodeJwt(token).iss;
    } catch {
      throw unauthenticated('The access token is invalid');
    }
    return issuer === ownIssuer ? clientTokens(token) : userTokens(token);
  };
}
