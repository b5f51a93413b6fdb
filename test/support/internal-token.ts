import { loadInternalSigningKey } from '../../subgraphs/platform/auth/keys.ts';
import { signInternalToken } from '../../subgraphs/platform/auth/internal-token.ts';
import { decodeJwt } from 'jose';
import { scopesOf, type Caller } from '../../subgraphs/platform/auth/tokens.ts';
import type { Config } from '../../subgraphs/platform/config.ts';

/**
 * `Bearer <internal token>` as the gateway of `config` (its keys: INTERNAL_TOKEN_PRIVATE_KEY or its DATA_DIR)
 * sends it to `subgraph` for `caller`: for tests that call a subgraph without the gateway.
 */
export async function internalBearer(config: Config, subgraph: string, caller: Caller) {
  return `Bearer ${await signInternalToken(caller, subgraph, await loadInternalSigningKey(config), { issuer: config.JWT_ISSUER })}`;
}

/** The caller of an access token, as the gateway finds it once the token is checked. */
export function callerOf(accessToken: string): Caller {
  const { sub, org, scope } = decodeJwt(accessToken) as { sub: string; org: string; scope: string };
  return { clientId: sub, orgId: org, scopes: scopesOf(scope) };
}
