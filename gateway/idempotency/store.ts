import { hkdfSync } from 'node:crypto';
import type { EntityManager, QueryResult } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import type { Config } from '../../subgraphs/platform/config.ts';
import { loadMvrKey, ReportVault } from '../../subgraphs/platform/crypto/vault.ts';
import { IdempotencyRecord } from './entity.ts';

/** How long a key's response is kept and replayed. */
export const RETENTION_MS = 24 * 60 * 60 * 1000;
/**
 * A request still "in progress" after this long lost its process (a crash between start and
 * answer): the next request with its key runs it again instead of waiting for the row to expire.
 * Well beyond any request's own time limits (subgraph and database timeouts).
 */
export const ABANDONED_AFTER_MS = 2 * 60 * 1000;
/** Rows removed per statement by the clean-up, and statements per run: bounded work. */
const PURGE_BATCH = 1000;
const PURGE_BATCHES_PER_RUN = 20;

/** Whose key it is: keys never collide across clients or organisations. */
export interface KeyOwner { clientId: string; organisation: string }

/** A request with a key: the key, what makes the request itself (requestFingerprint) and its token's scopes. */
export interface KeyedRequest { key: string; fingerprint: string; scopes: readonly string[] }

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export type Claim =
  /** This request owns the key now: run it, then complete(), withhold() or release(). */
  | { kind: 'claimed'; id: string }
  /** The key's request completed: answer with its response. */
  | { kind: 'replay'; response: StoredResponse }
  /** The key's request completed for a token with scopes this one lacks (`missing`): not this token's answer to see. */
  | { kind: 'forbidden'; missing: string[] }
  /** The key's request ran and its answer carried a secret, not kept: it is neither shown nor run again. */
  | { kind: 'withheld' }
  /** The key's first request is still running. */
  | { kind: 'in_progress' }
  /** The key was used for a different request. */
  | { kind: 'mismatch' };

/**
 * The response bodies are encrypted with a key derived from the MVR encryption key (HKDF, its own
 * purpose), so one secret to provision and no key shared between two uses.
 */
export async function loadResponseVault(config: Config): Promise<ReportVault> {
  return new ReportVault(Buffer.from(hkdfSync('sha256', await loadMvrKey(config), Buffer.alloc(0), 'fleet-risk-graph idempotent responses', 32)));
}

/** The gateway's table of Idempotency-Keys (insert first: the unique constraint settles races). */
export class IdempotencyStore {
  private readonly em: EntityManager;
  private readonly vault: ReportVault;
  constructor(em: EntityManager, vault: ReportVault) {
    this.em = em;
    this.vault = vault;
  }

  async claim(owner: KeyOwner, { key, fingerprint, scopes }: KeyedRequest, now = new Date()): Promise<Claim> {
    const em = this.em.fork();
    // Two rounds at most: a row that expired (or vanished) between the insert and the read is gone by the second.
    for (let round = 0; round < 2; round++) {
      const id = crypto.randomUUID();
      const inserted = await (em as SqlEntityManager).createQueryBuilder(IdempotencyRecord)
        .insert({
          id, ...owner, key, fingerprint, scopes: [...scopes], state: 'in_progress', lockedAt: now, createdAt: now,
          expiresAt: new Date(now.getTime() + RETENTION_MS),
        })
        .onConflict(['clientId', 'organisation', 'key']).ignore()
        .execute<QueryResult>('run');
      if (inserted.affectedRows === 1) return { kind: 'claimed', id };
      const existing = await em.findOne(IdempotencyRecord, { ...owner, key }, { disableIdentityMap: true });
      if (!existing) continue;
      if (existing.expiresAt <= now) {
        await em.nativeDelete(IdempotencyRecord, { id: existing.id, expiresAt: { $lte: now } });
        continue;
      }
      if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
      if (existing.state === 'in_progress') return this.takeOver(em, existing, scopes, now);
      const missing = existing.scopes.filter((scope) => !scopes.includes(scope));
      if (missing.length) return { kind: 'forbidden', missing };
      if (existing.state === 'withheld') return { kind: 'withheld' };
      return { kind: 'replay', response: this.open(existing) };
    }
    return { kind: 'in_progress' };
  }

  /**
   * A running request's key: still running, or taken over by whoever moves the lock first once
   * abandoned. The taker runs the request with its own token, so the answer it keeps is for its scopes.
   */
  private async takeOver(
    em: EntityManager, existing: IdempotencyRecord, scopes: readonly string[], now: Date,
  ): Promise<Claim> {
    if (existing.lockedAt.getTime() <= now.getTime() - ABANDONED_AFTER_MS) {
      const lock = { id: existing.id, state: 'in_progress' as const, lockedAt: existing.lockedAt };
      const taken = await em.nativeUpdate(IdempotencyRecord, lock, { lockedAt: now, scopes: [...scopes] });
      if (taken === 1) return { kind: 'claimed', id: existing.id };
    }
    return { kind: 'in_progress' };
  }

  /** Stores the response of a claimed key (its body encrypted, bound to the row). */
  async complete(id: string, response: StoredResponse): Promise<void> {
    const bodyCiphertext = this.vault.encrypt(response.body.toString('base64'), id);
    await this.em.fork().nativeUpdate(IdempotencyRecord, { id, state: 'in_progress' }, {
      state: 'done', status: response.status, headers: response.headers, bodyCiphertext, keyId: this.vault.keyId,
    });
  }

  /**
   * Records that a claimed key's request ran and answered a secret, without the answer: a retry is
   * told so (409) and does not run again.
   */
  async withhold(id: string): Promise<void> {
    await this.em.fork().nativeUpdate(IdempotencyRecord, { id, state: 'in_progress' }, { state: 'withheld' });
  }

  /** Gives a claimed key up (its request failed on our side): a retry runs again. */
  async release(id: string): Promise<void> {
    await this.em.fork().nativeDelete(IdempotencyRecord, { id, state: 'in_progress' });
  }

  /** Deletes expired rows in bounded batches; returns how many went. */
  async purgeExpired(now = new Date()): Promise<number> {
    const em = this.em.fork();
    let removed = 0;
    for (let batch = 0; batch < PURGE_BATCHES_PER_RUN; batch++) {
      const rows = await em.find(IdempotencyRecord, { expiresAt: { $lte: now } }, { fields: ['id'], limit: PURGE_BATCH, disableIdentityMap: true });
      if (!rows.length) break;
      removed += await em.nativeDelete(IdempotencyRecord, { id: { $in: rows.map((r) => r.id) }, expiresAt: { $lte: now } });
      if (rows.length < PURGE_BATCH) break;
    }
    return removed;
  }

  private open(record: IdempotencyRecord): StoredResponse {
    return {
      status: record.status!,
      headers: record.headers ?? {},
      body: Buffer.from(this.vault.decrypt(record.bodyCiphertext!, record.id), 'base64'),
    };
  }
}
