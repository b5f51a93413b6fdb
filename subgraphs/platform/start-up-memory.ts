import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * Start-up leaves garbage, bytecode run once and a young generation grown to its maximum, all of
 * which an idle server would keep: one full, memory-reducing collection once the stack is built
 * gives them back (50-65 MiB of idle RSS with npm start's malloc settings, which return what it frees
 * to the system). Called before listening, it costs start time only (0.1-0.35 s of CPU): no request
 * can wait for it (docs/benchmarks.md, "Idle memory by component"). V8 gives `gc` to a context made
 * while its flag is set: one context, for this call.
 */
export function releaseStartUpMemory() {
  collectThisThread();
  for (const release of threads) release();
}

/** The same collection, on the calling thread only. */
export function collectThisThread() {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as (options: { type: 'major'; flavor: 'last-resort' }) => void;
  v8.setFlagsFromString('--no-expose-gc');
  gc({ type: 'major', flavor: 'last-resort' });
}

/** Worker threads with a start-up of their own (the PGlite cluster's), asked to collect too. */
const threads = new Set<() => void>();

/** Asks `release` to collect its thread's start-up memory with this process's; the function returned stops it. */
export function releaseWithStartUp(release: () => void): () => void {
  threads.add(release);
  return () => threads.delete(release);
}
