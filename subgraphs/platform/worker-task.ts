import type { MessagePort } from 'node:worker_threads';

/** What the pool sends a worker: the task, and a port to say the task has started. */
export interface Envelope<Task> { task: Task; started: MessagePort }

/**
 * Wraps a task function as a worker module's default export for WorkerPool: it reports the start
 * first, so the pool's time limit counts the task's own work, not a fresh worker's start-up.
 */
export function workerTask<Task, Result>(run: (task: Task) => Result) {
  return ({ task, started }: Envelope<Task>): Result => {
    started.postMessage('started');
    started.close();
    return run(task);
  };
}
