import { Worker } from 'node:worker_threads';
import type { Results } from '@electric-sql/pglite';
import { releaseWithStartUp } from '../start-up-memory.ts';

/** Where the cluster lives and how much it may cache. */
export interface ClusterSpec { dataDir: string; sharedBuffersMb: number }

type RowMode = 'object' | 'array';
export type HostRequest =
  | { id: number; op: 'query'; sql: string; params: unknown[]; rowMode?: RowMode; blob?: Blob; tx?: number }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'close' }
  | { id: number; op: 'collect' };
export type HostReply = { id: number; result: unknown } | { id: number; error: Record<string, unknown> & { message: string } };

/** Without the request id: the thread numbers its requests. */
type Request = HostRequest extends infer R ? R extends HostRequest ? Omit<R, 'id'> : never : never;

export interface QueryOptions { rowMode?: RowMode; blob?: Blob }

/** What runs statements: the cluster, or one of its transactions. */
export interface Statements {
  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>>;
  exec(sql: string): Promise<Results[]>;
}

/** A cluster: this thread's, or (an owner's folder from before the shared cluster) an in-process PGlite. */
export interface Cluster extends Statements {
  transaction<T>(callback: (tx: Statements) => Promise<T>): Promise<T>;
}

const remoteError = ({ message, ...fields }: Record<string, unknown> & { message: string }) => Object.assign(new Error(message), fields);

/**
 * The shared PGlite cluster on a worker thread of its own (pglite-host.ts), with the part of
 * PGlite's interface this service uses: MikroORM's driver (through kysely's dialect), the read
 * statements and the Risk Index's COPY. In-process, each statement's WebAssembly and the parsing of
 * its rows ran on the event loop (most of a PATCH's 13-41 ms), and every other request waited for
 * it. Now only the answer's structured copy comes back to the loop.
 *
 * A transaction holds PGlite's own lock on the thread from BEGIN to its end, so statements outside
 * it wait there as they would in-process.
 */
export class PgliteThread implements Statements {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  #next = 1;
  #closed = false;
  #ready = false;
  readonly waitReady: Promise<void>;
  /** Collects the thread's start-up memory when the process collects its own (start-up-memory.ts). */
  readonly #collecting = releaseWithStartUp(() => { this.#call({ op: 'collect' }).catch(() => undefined); });

  private constructor(spec: ClusterSpec) {
    this.#worker = new Worker(new URL('./pglite-host.ts', import.meta.url), { workerData: spec });
    this.waitReady = new Promise<unknown>((resolve, reject) => this.#pending.set(0, { resolve, reject })).then(() => { this.#ready = true; });
    this.#worker.on('message', (reply: HostReply) => this.#settle(reply));
    this.#worker.on('error', (error) => this.#fail(error));
    this.#worker.on('exit', (code) => this.#fail(new Error(`the PGlite thread ended (exit code ${code})`)));
  }

  /** Starts the thread and opens the cluster on it. */
  static async open(spec: ClusterSpec): Promise<PgliteThread> {
    const thread = new PgliteThread(spec);
    try {
      await thread.waitReady;
    } catch (error) {
      await thread.#worker.terminate();
      throw error;
    }
    return thread;
  }

  get ready() { return this.#ready; }
  get closed() { return this.#closed; }

  #settle(reply: HostReply) {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    // Idle, the thread does not keep the process alive; a statement in flight does.
    if (!this.#pending.size) this.#worker.unref();
    if ('error' in reply) pending.reject(remoteError(reply.error));
    else pending.resolve(reply.result);
  }

  #fail(error: Error) {
    this.#closed = true;
    this.#collecting();
    for (const { reject } of this.#pending.values()) reject(error);
    this.#pending.clear();
  }

  /** Sends `request`; its id (a BEGIN's is its transaction's) and its answer. */
  #send<T>(request: Request): { id: number; answer: Promise<T> } {
    const id = this.#next++;
    if (this.#closed) return { id, answer: Promise.reject(new Error('PGlite is closed')) };
    if (!this.#pending.size) this.#worker.ref();
    const answer = new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#worker.postMessage({ ...request, id });
    });
    return { id, answer };
  }

  #call<T>(request: Request): Promise<T> {
    return this.#send<T>(request).answer;
  }

  #query<T>(sql: string, params: unknown[] = [], options?: QueryOptions, tx?: number): Promise<Results<T>> {
    return this.#call({ op: 'query', sql, params, rowMode: options?.rowMode, blob: options?.blob, tx });
  }

  query<T>(sql: string, params?: unknown[], options?: QueryOptions): Promise<Results<T>> {
    return this.#query(sql, params, options);
  }

  exec(sql: string): Promise<Results[]> {
    return this.#call({ op: 'exec', sql });
  }

  /**
   * As PGlite's: commits when `callback` resolves, rolls back when it throws. The callback's statements
   * are sent without waiting for the BEGIN's answer; the thread holds them until the transaction is
   * open. Waiting for it cost the transaction one more turn of this thread's loop while it held the
   * cluster, a wait that grows with the loop's work (4-5 ms PATCHes became 8-12 ms under load).
   */
  async transaction<T>(callback: (tx: Statements) => Promise<T>): Promise<T> {
    const { id, answer } = this.#send<number>({ op: 'begin' });
    // A BEGIN that failed fails the statements sent after it, and the end.
    const begun = answer.then(() => true, () => false);
    let closed = false;
    const usable = () => {
      if (closed) throw new Error('Transaction is closed');
      return id;
    };
    const tx: Statements = {
      query: (sql, params, options) => this.#query(sql, params, options, usable()),
      exec: (sql) => this.#call({ op: 'exec', sql, tx: usable() }),
    };
    try {
      const result = await callback(tx);
      closed = true;
      await this.#call({ op: 'end', tx: id, commit: true });
      return result;
    } catch (error) {
      if (!closed) {
        closed = true;
        if (await begun) await this.#call({ op: 'end', tx: id, commit: false });
      }
      throw error;
    }
  }

  async close() {
    if (this.#closed) return;
    try {
      await this.#call({ op: 'close' });
    } finally {
      this.#closed = true;
      this.#collecting();
      await this.#worker.terminate();
    }
  }
}
