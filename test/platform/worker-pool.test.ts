import { afterAll, describe, expect, it } from 'vitest';
import { AppError } from '../../subgraphs/platform/errors.ts';
import { WorkerPool } from '../../subgraphs/platform/worker-pool.ts';

interface Task { spinMs?: number; allocate?: boolean; value: number }

const overLimit = (limit: string, max: number) => new AppError('GEOMETRY_TOO_COMPLEX', `over ${limit} ${max}`, { limit, max });
const pool = new WorkerPool<Task, number>({
  name: 'test', filename: new URL('./fixtures/spin-task.ts', import.meta.url),
  threads: 1, taskTimeoutMs: 2_000, maxQueue: 1, maxHeapMb: 64, overLimit,
});
afterAll(async () => { await pool.close(); });

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try { await promise; } catch (error) { return error as AppError; }
  throw new Error('expected the task to fail');
}

describe('worker pool', () => {
  it('runs a task (a TypeScript module) in a worker thread and answers its result', async () => {
    expect(await pool.run({ value: 21 })).toBe(42);
  });

  it('ends a task over its time limit with the caller\'s error, and answers the next task', async () => {
    const error = await failure(pool.run({ spinMs: 60_000, value: 1 }));
    expect(error.code).toBe('GEOMETRY_TOO_COMPLEX');
    expect(error.extensions).toMatchObject({ limit: 'timeMs', max: 2_000 });
    expect(await pool.run({ value: 5 })).toBe(10);
  });

  it('ends a task over its heap limit without taking the process down, and answers the next task', async () => {
    const small = new WorkerPool<Task, number>({
      name: 'test', filename: new URL('./fixtures/spin-task.ts', import.meta.url),
      threads: 1, taskTimeoutMs: 60_000, maxQueue: 1, maxHeapMb: 64, overLimit,
    });
    try {
      const error = await failure(small.run({ allocate: true, value: 1 }));
      expect(error.code).toBe('GEOMETRY_TOO_COMPLEX');
      expect(error.extensions).toMatchObject({ limit: 'heapMb', max: 64 });
      expect(await small.run({ value: 7 })).toBe(14);
    } finally {
      await small.close();
    }
  });

  // Vitest fails the run on an unhandled error: the pool's 'error' event must have a listener.
  it('a worker that runs out of memory after its task was ended is reported, not thrown at the process', async () => {
    const workerErrors: Error[] = [];
    const tight = new WorkerPool<Task, number>({
      name: 'test', filename: new URL('./fixtures/spin-task.ts', import.meta.url),
      threads: 1, taskTimeoutMs: 100, maxQueue: 1, maxHeapMb: 64, overLimit, onWorkerError: (e) => workerErrors.push(e),
    });
    try {
      const error = await failure(tight.run({ allocate: true, value: 1 }));
      expect(error.extensions.limit).toMatch(/^(timeMs|heapMb)$/);
      expect(await tight.run({ value: 8 })).toBe(16);
      expect(workerErrors.every((e) => e instanceof Error)).toBe(true);
    } finally {
      await tight.close();
    }
  });

  it('answers 503 SERVICE_UNAVAILABLE with retryAfter when the thread is taken and the queue full', async () => {
    const running = pool.run({ spinMs: 300, value: 1 });
    const queued = pool.run({ value: 2 });
    const refused = await failure(pool.run({ value: 3 }));
    expect(refused.code).toBe('SERVICE_UNAVAILABLE');
    expect(refused.extensions.retryAfter).toBe(2);
    expect(await running).toBe(2);
    expect(await queued).toBe(4);
  });

  it('answers 503 to a task that waited in the queue longer than its limit', async () => {
    const impatient = new WorkerPool<Task, number>({
      name: 'test', filename: new URL('./fixtures/spin-task.ts', import.meta.url),
      threads: 1, taskTimeoutMs: 1_000, maxQueue: 4, maxWaitMs: 100, maxHeapMb: 64, overLimit,
    });
    try {
      const running = failure(impatient.run({ spinMs: 60_000, value: 1 }));
      const waited = await failure(impatient.run({ value: 2 }));
      expect(waited.code).toBe('SERVICE_UNAVAILABLE');
      expect((await running).extensions.limit).toBe('timeMs');
      expect(await impatient.run({ value: 4 })).toBe(8);
    } finally {
      await impatient.close();
    }
  });

  it('closing refuses the running and the waiting tasks with 503, and any later one', async () => {
    const closing = new WorkerPool<Task, number>({
      name: 'test', filename: new URL('./fixtures/spin-task.ts', import.meta.url),
      threads: 1, taskTimeoutMs: 60_000, maxQueue: 4, maxHeapMb: 64, overLimit,
    });
    expect(await closing.run({ value: 1 })).toBe(2);
    const running = failure(closing.run({ spinMs: 60_000, value: 1 }));
    const waiting = failure(closing.run({ value: 2 }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await closing.close();
    expect((await running).code).toBe('SERVICE_UNAVAILABLE');
    expect((await waiting).code).toBe('SERVICE_UNAVAILABLE');
    expect((await failure(closing.run({ value: 3 }))).code).toBe('SERVICE_UNAVAILABLE');
  });
});
