import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import type { OWNER_KINDS } from './entities.ts';

export type OwnerKind = (typeof OWNER_KINDS)[number];

/** What manifests and a mode belong to: an API client (`--client ID`) or an issuer registration (`--issuer ID`). */
export interface DocumentOwner { kind: OwnerKind; id: string }

export const ownerKey = (owner: DocumentOwner) => `${owner.kind}:${owner.id}`;

/**
 * The owner whose documents a caller may send. A client token's caller is its client; an end user's
 * (a token from an organisation's OpenID provider) carries a user id and, as its client id, the id of
 * the issuer registration that admitted it: its documents are that registration's.
 */
export function ownerOfCaller(caller: Caller): DocumentOwner {
  return { kind: caller.userId === undefined ? 'client' : 'issuer', id: caller.clientId };
}
