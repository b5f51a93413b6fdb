import type { EntityManager } from '@mikro-orm/core';
import { notFound } from '../../subgraphs/platform/errors.ts';
import { TrustChange, TrustedDocument, TrustedManifest, TrustModeRow, type TRUST_MODES } from './entities.ts';
import type { ParsedManifest } from './manifest.ts';
import type { DocumentOwner } from './owner.ts';

export type TrustMode = (typeof TRUST_MODES)[number];

export interface ManifestSummary {
  manifestId: string;
  owner: DocumentOwner;
  name: string | null;
  format: string;
  documents: number;
  publishedAt: string;
  retiredAt: string | null;
}

/** What one owner may send, as every gateway process keeps it (registry.ts). */
export interface OwnerDocuments {
  mode: TrustMode;
  /** The text of each document id of the owner's manifests in force (a later manifest's wins an id both hold). */
  byId: Map<string, string>;
  /** The SHA-256 of each of those texts: a full-text request is trusted when its text is one of them. */
  bodies: Set<string>;
}

/** A document of a manifest in force, with its owner (the breaking-change gate checks them all). */
export interface RegisteredDocument { owner: DocumentOwner; manifestId: string; documentId: string; operationName: string | null; body: string }

interface DocumentRow {
  manifestId: string; ownerKind: DocumentOwner['kind']; ownerId: string; documentId: string; body: string; bodyHash: string; operationName: string | null;
}

const ownerWhere = (owner: DocumentOwner) => ({ ownerKind: owner.kind, ownerId: owner.id });

const summary = (m: TrustedManifest): ManifestSummary => ({
  manifestId: m.id, owner: { kind: m.ownerKind, id: m.ownerId }, name: m.name ?? null, format: m.format, documents: m.documentCount,
  publishedAt: m.publishedAt.toISOString(), retiredAt: m.retiredAt?.toISOString() ?? null,
});

/** The gateway's tables of trusted documents. Each change appends to trusted_document_changes in its transaction. */
export class TrustedDocumentStore {
  private readonly em: EntityManager;
  constructor(em: EntityManager) { this.em = em; }

  async publish(owner: DocumentOwner, manifest: ParsedManifest, name: string | null): Promise<ManifestSummary> {
    return this.em.fork().transactional(async (em) => {
      const row = em.create(TrustedManifest, { ...ownerWhere(owner), name, format: manifest.format, documentCount: manifest.documents.length } as never);
      await em.flush();
      await em.insertMany(TrustedDocument, manifest.documents.map((d) => ({ id: crypto.randomUUID(), manifestId: row.id, ...d })));
      em.create(TrustChange, ownerWhere(owner) as never);
      await em.flush();
      return summary(row);
    });
  }

  async retire(manifestId: string): Promise<ManifestSummary> {
    return this.em.fork().transactional(async (em) => {
      const row = await em.findOne(TrustedManifest, { id: manifestId });
      if (!row) throw notFound('Manifest', manifestId);
      if (!row.retiredAt) {
        row.retiredAt = new Date();
        em.create(TrustChange, { ownerKind: row.ownerKind, ownerId: row.ownerId } as never);
        await em.flush();
      }
      return summary(row);
    });
  }

  async setMode(owner: DocumentOwner, mode: TrustMode): Promise<{ owner: DocumentOwner; mode: TrustMode }> {
    await this.em.fork().transactional(async (em) => {
      const row = await em.findOne(TrustModeRow, ownerWhere(owner));
      if (row) row.mode = mode;
      else em.create(TrustModeRow, { ...ownerWhere(owner), mode } as never);
      em.create(TrustChange, ownerWhere(owner) as never);
      await em.flush();
    });
    return { owner, mode };
  }

  /** Manifests (the retired ones too) and modes, of one owner or of all. */
  async list(owner?: DocumentOwner) {
    const em = this.em.fork();
    const where = owner ? ownerWhere(owner) : {};
    const [manifests, modes] = await Promise.all([
      em.find(TrustedManifest, where, { orderBy: { publishedAt: 'asc' } }),
      em.find(TrustModeRow, where, { orderBy: { ownerKind: 'asc', ownerId: 'asc' } }),
    ]);
    return {
      manifests: manifests.map(summary),
      modes: modes.map((m) => ({ owner: { kind: m.ownerKind, id: m.ownerId }, mode: m.mode })),
    };
  }

  /** One owner's mode and documents in force. */
  async load(owner: DocumentOwner): Promise<OwnerDocuments> {
    const em = this.em.fork();
    const [mode, documents] = await Promise.all([
      em.findOne(TrustModeRow, ownerWhere(owner)),
      this.documentsInForce(em, owner),
    ]);
    return {
      mode: mode?.mode ?? 'off',
      byId: new Map(documents.map((d) => [d.documentId, d.body])),
      bodies: new Set(documents.map((d) => d.bodyHash)),
    };
  }

  /** Every document of a manifest in force, of every owner. */
  async registered(): Promise<RegisteredDocument[]> {
    const rows = await this.documentsInForce(this.em.fork());
    return rows.map(({ ownerKind, ownerId, manifestId, documentId, operationName, body }) => ({
      owner: { kind: ownerKind, id: ownerId }, manifestId, documentId, operationName, body,
    }));
  }

  private documentsInForce(em: EntityManager, owner?: DocumentOwner): Promise<DocumentRow[]> {
    const params = owner ? [owner.kind, owner.id] : [];
    return em.getConnection().execute(
      `select d.manifest_id as "manifestId", m.owner_kind as "ownerKind", m.owner_id as "ownerId", d.document_id as "documentId",
         d.body, d.body_hash as "bodyHash", d.operation_name as "operationName"
       from "platform"."trusted_documents" d join "platform"."trusted_manifests" m on m.id = d.manifest_id
       where m.retired_at is null ${owner ? 'and m.owner_kind = ? and m.owner_id = ?' : ''}
       order by m.published_at, m.id`, params,
    );
  }

  /** The last change's sequence number (0 when none). */
  async lastChange(): Promise<number> {
    const [row] = await this.em.getConnection().execute<{ seq: string | null }[]>('select max(seq) as seq from "platform"."trusted_document_changes"');
    return Number(row?.seq ?? 0);
  }

  /**
   * The changes numbered after `seq`, and those of the last 30 s: a transaction that took its number
   * before another but committed after it is read on a later poll (the caller skips the rows it saw).
   */
  async recentChanges(seq: number): Promise<{ seq: number; owner: DocumentOwner }[]> {
    const rows: { seq: string; owner_kind: DocumentOwner['kind']; owner_id: string }[] = await this.em.getConnection().execute(
      `select seq, owner_kind, owner_id from "platform"."trusted_document_changes"
       where seq > ? or changed_at > now() - interval '30 seconds' order by seq`, [seq],
    );
    return rows.map((r) => ({ seq: Number(r.seq), owner: { kind: r.owner_kind, id: r.owner_id } }));
  }
}
