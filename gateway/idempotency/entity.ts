import { defineEntity, p } from '@mikro-orm/core';

/** Longest accepted Idempotency-Key value. */
export const KEY_MAX = 255;

/**
 * `withheld`: the request ran and its answer carried a secret shown once (a new client secret, a
 * webhook signing secret), which is never kept: the key answers 409 IDEMPOTENT_SECRET_NOT_REPLAYED.
 */
export const IDEMPOTENCY_STATES = ['in_progress', 'done', 'withheld'] as const;

/**
 * One Idempotency-Key of one client in one organisation: inserted before the request runs (the
 * unique constraint makes a concurrent duplicate lose), completed with the response to replay.
 * The response body is encrypted (it may hold personal data); 5xx responses are never stored.
 * Tokens name a client, never an end user: if end-user tokens come, their subject joins the owner
 * (the unique constraint) beside the client.
 */
export const IdempotencyRecordSchema = defineEntity({
  name: 'IdempotencyRecord',
  tableName: 'idempotency_keys',
  uniques: [{ properties: ['clientId', 'organisation', 'key'], name: 'idempotency_keys_client_org_key_unique' }],
  indexes: [{ properties: ['expiresAt'], name: 'idempotency_keys_expires_at_index' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    clientId: p.string().length(128),
    organisation: p.string().length(128),
    key: p.string().length(KEY_MAX),
    /** SHA-256 (hex) of the method, path and canonical body of the first request. */
    fingerprint: p.string().length(64),
    state: p.enum(IDEMPOTENCY_STATES),
    /** When the request started running (or was taken over after its first runner vanished). */
    lockedAt: p.datetime(),
    status: p.integer().nullable(),
    /** The scopes of the token that ran the request: its answer is replayed only to a token holding them all. */
    scopes: p.array(),
    /** The response's own headers (not the per-request ones: see plugin.ts). */
    headers: p.json<Record<string, string>>().nullable(),
    /** The response body, AES-256-GCM encrypted, bound to the row id. */
    bodyCiphertext: p.blob().nullable(),
    keyId: p.string().length(32).nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    expiresAt: p.datetime(),
  },
});
export class IdempotencyRecord extends IdempotencyRecordSchema.class {}
IdempotencyRecordSchema.setClass(IdempotencyRecord);
