import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { AppError } from './errors.ts';
import type { Envelope } from './worker-task.ts';

export interface WorkerPoolOptions {
  name: string;
  /**
   * The task module: its default export is `workerTask(fn)` (worker-task.ts). A .ts file runs under
   * Node's type stripping.
   */
  filename: URL;
  threads: number;
  /** A running task is ended (its worker replaced) after this long, counted from its start in the worker. */
  taskTimeoutMs: number;
  /** Tasks waiting for a thread; beyond it, or after waiting `maxWaitMs` (default `taskTimeoutMs`), the answer is 503. */
  maxQueue: number;
  maxWaitMs?: number;
  /** Heap of one worker; a task over it ends that worker, not the process. */
  maxHeapMb: number;
  /** The error for a task ended by its time or memory limit. */
  overLimit: (limit: 'timeMs' | 'heapMb', max: number) => Error;
  /** A worker failing outside a task (e.g. out of memory after its task was ended); it is replaced. */
  onWorkerError?: (error: Error) => void;
}

/** A worker that does not take its task within this long (start-up included) is answered 503. */
const START_TIMEOUT_MS = 30_000;

/** The answer when every thread is taken and the queue is full: retry shortly. */
const busy = (name: string, retryAfter: number) =>
  new AppError('SERVICE_UNAVAILABLE', `the ${name} workers are busy; retry in a few seconds`, { retryAfter });

/**
 * CPU-heavy work off the event loop: a fixed set of worker threads (piscina), each task bounded in
 * time and memory. A task starts only when a thread is free, so its time limit measures its own
 * work, not the queue; the queue is bounded in length and in waiting time.
 */
export class WorkerPool<Task, Result> {
  readonly #pool: Piscina<Envelope<Task>, Result>;
  readonly #options: WorkerPoolOptions;
  #running = 0;
  #closed = false;
  readonly #waiting = new Set<{ start: () => void; refuse: () => void }>();

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
    this.#pool = new Piscina<Envelope<Task>, Result>({
      name: 'default', filename: options.filename.href,
      minThreads: options.threads, maxThreads: options.threads, idleTimeout: Infinity,
      // The workers yield the CPU to the event loop that answers requests (Linux: a per-thread nice value).
      niceIncrement: 10,
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb },
    });
    // Unheard, the pool's 'error' event would throw in the event loop and end the process.
    this.#pool.on('error', (error: Error) => options.onWorkerError?.(error));
  }

  get threads() { return this.#options.threads; }

  async run(task: Task): Promise<Result> {
    if (this.#closed) throw busy(this.#options.name, 5);
    await this.#slot();
    const timeMs = this.#options.taskTimeoutMs;
    const controller = new AbortController();
    let overTime = false;
    // Until the worker takes the task only the start-up bound runs; from then on, the task's own limit.
    let timer = setTimeout(() => controller.abort(), START_TIMEOUT_MS);
    const { port1: started, port2 } = new MessageChannel();
    started.once('message', () => {
      clearTimeout(timer);
      timer = setTimeout(() => { overTime = true; controller.abort(); }, timeMs);
    });
    try {
      return await this.#pool.run({ task, started: port2 }, { signal: controller.signal, transferList: [port2] });
    } catch (error) {
      if (overTime) throw this.#options.overLimit('timeMs', timeMs);
      // Not started within the start-up bound, or the pool closing under the task.
      if (controller.signal.aborted || this.#closed) throw busy(this.#options.name, 5);
      if ((error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY') throw this.#options.overLimit('heapMb', this.#options.maxHeapMb);
      throw error;
    } finally {
      clearTimeout(timer);
      started.close();
      this.#release();
    }
  }

  #slot(): Promise<void> {
    if (this.#running < this.#options.threads) {
      this.#running += 1;
      return Promise.resolve();
    }
    const retryAfter = Math.max(1, Math.ceil(this.#options.taskTimeoutMs / 1000));
    if (this.#waiting.size >= this.#options.maxQueue) return Promise.reject(busy(this.#options.name, retryAfter));
    return new Promise((resolve, reject) => {
      const refuse = () => { clearTimeout(timer); reject(busy(this.#options.name, retryAfter)); };
      const entry = { start: () => { clearTimeout(timer); resolve(); }, refuse };
      const timer = setTimeout(() => { this.#waiting.delete(entry); reject(busy(this.#options.name, retryAfter)); }, this.#options.maxWaitMs ?? this.#options.taskTimeoutMs);
      this.#waiting.add(entry);
    });
  }

  /** Hands the thread to the oldest waiting task, or frees it. */
  #release() {
    const next = this.#waiting.values().next();
    if (next.done) { this.#running -= 1; return; }
    this.#waiting.delete(next.value);
    next.value.start();
  }

  async close() {
    this.#closed = true;
    for (const entry of this.#waiting) entry.refuse();
    this.#waiting.clear();
    await this.#pool.destroy();
  }
}
