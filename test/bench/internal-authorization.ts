import { loadInternalSigningKey, loadSigningKeys } from '../../subgraphs/platform/auth/keys.ts';
import { internalTokenMinter } from '../../subgraphs/platform/auth/internal-token.ts';
import { bearerToken, verifyToken, type Caller } from '../../subgraphs/platform/auth/tokens.ts';
import type { Config } from '../../subgraphs/platform/config.ts';

/** The Authorization a subgraph takes for a client's Authorization: the gateway's internal token for its caller and that subgraph. */
export type InternalAuthorizer = (authorization: string | null | undefined, subgraph: string) => Promise<string | undefined>;

/**
 * What a baseline gateway (stock Apollo Gateway, Hive) does in our gateway's place, with its keys
 * (`config`), so that our subgraphs take its requests: the client's token verified (remembered, as
 * ours does; no revocation check), then the internal token for its caller and the subgraph.
 */
export async function internalAuthorizer(config: Config): Promise<InternalAuthorizer> {
  const { publicKey } = await loadSigningKeys(config);
  const mint = internalTokenMinter(await loadInternalSigningKey(config), config.JWT_ISSUER);
  const callers = new Map<string, Promise<Caller>>();
  return async (authorization, subgraph) => {
    const token = bearerToken(authorization ?? undefined);
    if (!token) return undefined;
    let caller = callers.get(token);
    if (!caller) callers.set(token, caller = verifyToken(token, publicKey, config.JWT_ISSUER));
    return `Bearer ${await mint(await caller, subgraph)}`;
  };
}
