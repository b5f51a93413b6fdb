import { defineEntity, p } from '@mikro-orm/core';

/** Who a manifest and a mode belong to: an API client, or an issuer registration (end users signed in at an organisation's provider). */
export const OWNER_KINDS = ['client', 'issuer'] as const;
export const TRUST_MODES = ['off', 'audit', 'enforce'] as const;
export const MANIFEST_FORMATS = ['apollo', 'codegen'] as const;

/** Longest document id kept: Apollo's are sha256 hex, others are the app's choice. */
export const DOCUMENT_ID_MAX = 256;

const owner = {
  ownerKind: p.enum(OWNER_KINDS),
  ownerId: p.string().length(128),
};

/** One published manifest: its documents are trusted for its owner until it is retired (kept, never deleted). */
export const TrustedManifestSchema = defineEntity({
  name: 'TrustedManifest',
  tableName: 'trusted_manifests',
  indexes: [{ properties: ['ownerKind', 'ownerId'], name: 'trusted_manifests_owner_index' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...owner,
    /** The operator's label (the file name by default). */
    name: p.string().length(200).nullable(),
    format: p.enum(MANIFEST_FORMATS),
    documentCount: p.integer(),
    publishedAt: p.datetime().onCreate(() => new Date()),
    retiredAt: p.datetime().nullable(),
  },
});
export class TrustedManifest extends TrustedManifestSchema.class {}
TrustedManifestSchema.setClass(TrustedManifest);

/** A document of a manifest: the id a client sends for it, opaque (unique within its manifest), and its text. */
export const TrustedDocumentSchema = defineEntity({
  name: 'TrustedDocument',
  tableName: 'trusted_documents',
  uniques: [{ properties: ['manifestId', 'documentId'], name: 'trusted_documents_manifest_document_unique' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    manifestId: p.uuid(),
    documentId: p.string().length(DOCUMENT_ID_MAX),
    body: p.text(),
    /** SHA-256 (hex) of the body: how a full-text request is recognised as a registered document. */
    bodyHash: p.string().length(64),
    operationName: p.string().length(256).nullable(),
  },
});
export class TrustedDocument extends TrustedDocumentSchema.class {}
TrustedDocumentSchema.setClass(TrustedDocument);

/** An owner's mode; an owner without a row is `off`. */
export const TrustModeRowSchema = defineEntity({
  name: 'TrustModeRow',
  tableName: 'trusted_document_modes',
  uniques: [{ properties: ['ownerKind', 'ownerId'], name: 'trusted_document_modes_owner_unique' }],
  properties: {
    id: p.uuid().primary().onCreate(() => crypto.randomUUID()),
    ...owner,
    mode: p.enum(TRUST_MODES),
    updatedAt: p.datetime().onCreate(() => new Date()).onUpdate(() => new Date()),
  },
});
export class TrustModeRow extends TrustModeRowSchema.class {}
TrustModeRowSchema.setClass(TrustModeRow);

/**
 * One row per change of an owner's manifests or mode, in commit order: every gateway process reads
 * the rows past the last one it saw (registry.ts) and forgets those owners.
 */
export const TrustChangeSchema = defineEntity({
  name: 'TrustChange',
  tableName: 'trusted_document_changes',
  properties: {
    seq: p.bigint('number').primary().autoincrement(),
    ...owner,
    changedAt: p.datetime().onCreate(() => new Date()),
  },
});
export class TrustChange extends TrustChangeSchema.class {}
TrustChangeSchema.setClass(TrustChange);

export const TRUSTED_DOCUMENT_ENTITIES = [TrustedManifest, TrustedDocument, TrustModeRow, TrustChange];
