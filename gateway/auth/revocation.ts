import type { EntityManager } from '@mikro-orm/core';
import { AppError, unauthenticated } from '../../subgraphs/platform/errors.ts';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';

/** A verified access token: its caller and its client's secret generation when it was issued (null in tokens without one). */
export interface VerifiedToken { caller: Caller; generation: number | null }

/** What revocation needs to know of a client: whether it is disabled, and its secret generation. */
export interface ClientStatus { disabled: boolean; generation: number }
export type ClientStatusLookup = (clientId: string) => Promise<ClientStatus | null>;

/**
 * How long a client's status is trusted before the database is asked again: the bound, on every
 * gateway process, between a rotation or disable and the refusal of every token issued before it
 * (subgraphs check no client token: they trust the gateway's internal token, auth/internal-token.ts).
 */
export const REVOCATION_CACHE_MS = 2_000;
const CLIENTS_KEPT = 10_000;

/** Reads a client's status from the gateway's `platform.clients` table. */
export function clientStatusFromDatabase(em: EntityManager): ClientStatusLookup {
  return async (clientId) => {
    const rows = await em.getConnection().execute<{ disabled: boolean; secret_generation: number }[]>(
      'select disabled, secret_generation from "platform"."clients" where client_id = ?', [clientId],
    ).catch(() => { throw new AppError('SERVICE_UNAVAILABLE', 'The access token cannot be checked now: the database is unavailable'); });
    const row = rows[0];
    return row ? { disabled: row.disabled, generation: Number(row.secret_generation) } : null;
  };
}

export interface RevocationCheck {
  /** Throws UNAUTHENTICATED when the token's client is unknown or disabled, or the token predates its current secret generation. */
  check(token: VerifiedToken): Promise<void>;
  /** Forgets a client's cached status (after this process changed it). */
  forget(clientId: string): void;
}

/**
 * Tokens carry the secret generation of their client (`gen`), which a rotation and a disable
 * increment: a token is refused as soon as the stored generation is ahead of its own, whatever the
 * clock says. Statuses are cached for REVOCATION_CACHE_MS; a token newer than the cached status
 * (issued after a rotation seen elsewhere) is looked up again at once.
 */
export function revocationCheck(lookup: ClientStatusLookup, cacheMs = REVOCATION_CACHE_MS): RevocationCheck {
  const cache = new Map<string, { status: ClientStatus | null; until: number }>();

  async function status(clientId: string, generation: number): Promise<ClientStatus | null> {
    const hit = cache.get(clientId);
    if (hit && hit.until > Date.now() && hit.status && hit.status.generation >= generation) return hit.status;
    const fresh = await lookup(clientId);
    if (cache.size >= CLIENTS_KEPT) cache.clear();
    cache.set(clientId, { status: fresh, until: Date.now() + cacheMs });
    return fresh;
  }

  return {
    async check({ caller, generation }) {
      if (generation === null) throw unauthenticated('The access token predates secret generations; request a new one');
      const current = await status(caller.clientId, generation);
      if (!current || current.disabled) throw unauthenticated('The client of this access token is unknown or disabled');
      if (generation !== current.generation) throw unauthenticated('The access token was issued before the client secret was rotated or the client was disabled');
    },
    forget(clientId) { cache.delete(clientId); },
  };
}
