import type { FastifyBaseLogger } from 'fastify';
import { getOperationAST, parse } from 'graphql';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { AppError } from '../../subgraphs/platform/errors.ts';
import { sha256Hex } from './manifest.ts';
import { ownerKey, ownerOfCaller, type DocumentOwner } from './owner.ts';
import type { OwnerDocuments, TrustedDocumentStore } from './store.ts';

/** How often each process reads the change log: a change made elsewhere is in force here within about this, and at most twice it. */
export const TRUST_POLL_MS = 1_000;
/** An unregistered document is logged in `audit` at most this often per owner. */
export const AUDIT_EVERY_MS = 60_000;
const OWNERS_KEPT = 10_000;
const AUDITED_KEPT = 10_000;

/** A request's document refused before it runs, with the HTTP status of its answer. */
export class DocumentRefused extends Error {
  readonly code: string;
  readonly status: number;
  readonly extensions: Record<string, unknown>;
  constructor(code: string, status: number, message: string, extensions: Record<string, unknown> = {}) {
    super(message);
    this.code = code;
    this.status = status;
    this.extensions = { code, ...extensions };
  }
}

/** What a request names: its text, an id (APQ's `sha256Hash` or GraphQL over HTTP's `documentId`), or both. */
export interface DocumentRequest {
  query?: string;
  id?: string;
  /** `documentId` ids are registered ones only; an APQ hash not registered may still be in Apollo Server's APQ cache. */
  idKind?: 'apq' | 'documentId';
  operationName?: string;
}

/** The name of the operation a text runs (null: anonymous, or a text that does not parse; Apollo Server answers it). */
function operationNameOf(query: string, operationName: string | undefined): string | null {
  try {
    return getOperationAST(parse(query), operationName)?.name?.value ?? null;
  } catch {
    return null;
  }
}

/** Apollo Server's answer to an unknown APQ hash, which Apollo Client's persisted query link understands. */
export const persistedQueryNotFound = () => new DocumentRefused('PERSISTED_QUERY_NOT_FOUND', 200, 'PersistedQueryNotFound');

/**
 * Trusted documents as each gateway process applies them: every owner's mode and documents in force,
 * loaded on its first request and forgotten when the change log names it (polled every TRUST_POLL_MS;
 * changes made by this process are forgotten at once).
 */
export class TrustedDocuments {
  private readonly owners = new Map<string, Promise<OwnerDocuments>>();
  private readonly audited = new Map<string, number>();
  private readonly store: TrustedDocumentStore;
  private readonly log: FastifyBaseLogger;
  private lastSeq = 0;
  private seen = new Set<number>();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(store: TrustedDocumentStore, log: FastifyBaseLogger) {
    this.store = store;
    this.log = log;
  }

  async start(pollMs = TRUST_POLL_MS) {
    this.lastSeq = await this.store.lastChange();
    this.timer = setInterval(() => void this.poll(), pollMs);
    this.timer.unref();
  }

  stop() { clearInterval(this.timer); }

  forget(owner: DocumentOwner) { this.owners.delete(ownerKey(owner)); }

  private async poll() {
    if (this.polling) return;
    this.polling = true;
    try {
      const changes = await this.store.recentChanges(this.lastSeq);
      for (const change of changes) if (!this.seen.has(change.seq)) this.forget(change.owner);
      this.seen = new Set(changes.map((c) => c.seq));
      this.lastSeq = Math.max(this.lastSeq, ...changes.map((c) => c.seq));
    } catch (error) {
      this.log.warn({ err: { type: (error as Error).name, message: (error as Error).message } }, 'trusted documents: the change log could not be read');
    } finally {
      this.polling = false;
    }
  }

  /** The owner's mode and documents, loaded once (a failed load is not kept: the next request tries again). */
  documentsOf(owner: DocumentOwner): Promise<OwnerDocuments> {
    const key = ownerKey(owner);
    let entry = this.owners.get(key);
    if (!entry) {
      if (this.owners.size >= OWNERS_KEPT) this.owners.delete(this.owners.keys().next().value as string);
      entry = this.store.load(owner).catch((error: unknown) => {
        if (this.owners.get(key) === entry) this.owners.delete(key);
        this.log.warn({ err: { type: (error as Error).name, message: (error as Error).message } }, 'trusted documents: an owner could not be loaded');
        throw new AppError('SERVICE_UNAVAILABLE', 'The trusted documents cannot be read now: the database is unavailable');
      });
      this.owners.set(key, entry);
    }
    return entry;
  }

  /**
   * The text a request runs when it names a registered document (undefined: run the request as sent).
   * Throws DocumentRefused: an unknown id (PERSISTED_QUERY_NOT_FOUND; an APQ hash is left to Apollo
   * Server's cache unless the owner enforces), a registered id sent with another text, or in `enforce` a
   * text that is none of the owner's documents (403 OPERATION_NOT_TRUSTED). In `audit` such a text runs
   * and is logged (each distinct one at most once a minute per owner) with its caller.
   */
  async resolve(caller: Caller | null | undefined, request: DocumentRequest): Promise<string | undefined> {
    const { query, id } = request;
    const documents = caller ? await this.documentsOf(ownerOfCaller(caller)) : undefined;
    if (id !== undefined) {
      const registered = documents?.byId.get(id);
      if (registered !== undefined) {
        if (query !== undefined && query !== registered) {
          throw new DocumentRefused('BAD_REQUEST', 400, `provided sha does not match query: the document sent is not the one registered as ${id}`);
        }
        return registered;
      }
      if (query === undefined) {
        if (request.idKind === 'documentId' || documents?.mode === 'enforce') throw persistedQueryNotFound();
        return undefined;
      }
    }
    if (!caller || !documents || documents.mode === 'off' || query === undefined) return undefined;
    const hash = sha256Hex(query);
    if (documents.bodies.has(hash)) return undefined;
    if (documents.mode === 'enforce') {
      const why = 'This client sends only its registered documents (trusted documents: enforce): publish this one in a manifest first';
      throw new DocumentRefused('OPERATION_NOT_TRUSTED', 403, why);
    }
    this.audit(caller, hash, query, request.operationName);
    return undefined;
  }

  private audit(caller: Caller, hash: string, query: string, operationName: string | undefined) {
    const owner = ownerOfCaller(caller);
    const key = `${ownerKey(owner)} ${hash}`;
    const now = Date.now();
    if ((this.audited.get(key) ?? 0) > now - AUDIT_EVERY_MS) return;
    if (this.audited.size >= AUDITED_KEPT) this.audited.clear();
    this.audited.set(key, now);
    // The document's hash and name, never its text: literals in it may be personal data.
    const trustedDocuments = { owner, clientId: caller.clientId, orgId: caller.orgId, documentHash: hash, operationName: operationNameOf(query, operationName) };
    this.log.warn({ trustedDocuments }, 'trusted documents (audit): an unregistered document ran');
  }
}
