import { createHash } from 'node:crypto';
import type { Caller } from './tokens.ts';

/**
 * An end user's id as logs, traces, counters and stored keys show it: a digest, never the id (a
 * `sub` may be an e-mail address). Scoped to the issuer registration: one `sub` at two issuers is
 * two users. Pseudonymous, not anonymous: whoever knows a user id and registration can recompute it.
 */
export const userHash = (registrationId: string, userId: string) =>
  createHash('sha256').update(`${registrationId}\u0000${userId}`).digest('base64url').slice(0, 22);

/**
 * Whose requests, Idempotency-Keys, subscription places and replays these are: the client, or
 * for an end user's token, that user of the issuer registration (`<registration id>/<user hash>`).
 */
export const callerKey = (caller: Pick<Caller, 'clientId' | 'userId'>) =>
  (caller.userId === undefined ? caller.clientId : `${caller.clientId}/${userHash(caller.clientId, caller.userId)}`);
