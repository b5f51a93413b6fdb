import { createHash } from 'node:crypto';
import { callerKey } from '../../subgraphs/platform/auth/caller-key.ts';
import canonicalize from 'canonicalize';
import { Kind, parse, type OperationTypeNode, type ParseOptions } from 'graphql';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';

/**
 * Identical in-flight work runs once: the first call with a key (the leader) runs `work`, calls with
 * the same key while it runs (followers) get its promise, fulfilled or rejected alike. The entry is
 * removed as the leader settles, so nothing is kept past the work and a later call runs again.
 */
export class Collapser {
  private readonly leaders = new Map<string, Promise<unknown>>();

  /** `shared`: this call joined a leader's work instead of running its own. */
  run<T>(key: string, work: () => Promise<T>): { answer: Promise<T>; shared: boolean } {
    const running = this.leaders.get(key) as Promise<T> | undefined;
    if (running) return { answer: running, shared: true };
    // The leader starts on the event loop's next turn, so the requests already read from other
    // sockets in this turn reach the map first and join it: without any I/O to wait on (in-process
    // subgraphs on PGlite) a request would otherwise run to its end before the next one is read.
    const answer = new Promise<void>((resolve) => { setImmediate(resolve); }).then(work).finally(() => { this.leaders.delete(key); });
    this.leaders.set(key, answer);
    return { answer, shared: false };
  }

  /** Leaders running now (tests). */
  get size() { return this.leaders.size; }
}

/**
 * Read-your-writes within the process: a counter per organisation, bumped as each of its mutations is
 * answered and part of every read's key. A read that starts after a caller got its mutation's answer
 * holds a later value than any read that started before it, so it never joins one.
 */
export class WriteEpochs {
  private readonly epochs = new Map<string, number>();

  of(orgId: string | undefined): number { return orgId === undefined ? 0 : this.epochs.get(orgId) ?? 0; }

  bump(orgId: string) { this.epochs.set(orgId, this.of(orgId) + 1); }
}

/** Who asks, as far as an answer can differ: client (or end user), organisation and scopes (null: anonymous). */
export const callerIdentity = (caller: Caller | null | undefined) =>
  caller ? { client: callerKey(caller), org: caller.orgId, scopes: [...caller.scopes].sort() } : null;

/** A collapsing key: sha256 of the parts' canonical JSON, so a long document or variables are not kept twice. */
export const collapseKey = (parts: Record<string, unknown>) => createHash('sha256').update(canonicalize(parts) ?? '').digest('base64');

const OPERATION_TYPES_KEPT = 1000;

/**
 * The type of the operation a document runs (query, mutation, subscription), or null when the
 * document does not parse or names no single operation (Apollo Server answers those with an error).
 * Kept by the document's sha256 and operation name for the last documents seen, so a repeated
 * document is parsed once.
 */
export class OperationTypes {
  private readonly known = new Map<string, OperationTypeNode | null>();
  private readonly parseOptions: ParseOptions;

  constructor(parseOptions: ParseOptions) {
    this.parseOptions = parseOptions;
  }

  of(text: string, operationName: string | undefined): OperationTypeNode | null {
    const key = `${createHash('sha256').update(text).digest('base64')} ${operationName ?? ''}`;
    let type = this.known.get(key);
    if (type === undefined) {
      type = this.parsed(text, operationName);
      if (this.known.size >= OPERATION_TYPES_KEPT) this.known.delete(this.known.keys().next().value as string);
      this.known.set(key, type);
    }
    return type;
  }

  private parsed(text: string, operationName: string | undefined): OperationTypeNode | null {
    try {
      const operations = parse(text, this.parseOptions).definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
      const chosen = operationName === undefined ? (operations.length === 1 ? operations[0] : undefined) : operations.find((o) => o.name?.value === operationName);
      return chosen?.operation ?? null;
    } catch {
      return null;
    }
  }
}
