import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Two lanes of work on one event loop. Requests (counted from arrival to answer by the gateway's
 * foreground plugin) are the foreground; work run through `inBackground` (subscription executions)
 * and everything it awaits is the background. A background turn waits while requests are in flight,
 * so a request's own turns meet no background work between them: with plain turns each of them
 * waited behind a piece of background work, and a request of a few turns took several pieces' time.
 */

/** The longest the next background piece waits for the requests in flight: a busy gateway still runs its background work. */
export const BACKGROUND_WAIT_MAX_MS = 25;

const background = new AsyncLocalStorage<true>();
let inFlight = 0;
/** Background pieces waiting for their turn, in order. */
const queue: (() => void)[] = [];
let scheduled = false;
let timer: NodeJS.Timeout | undefined;
/** When the head of the queue started waiting for the requests in flight. */
let headSince: number | undefined;

function schedule() {
  if (scheduled || !queue.length) return;
  scheduled = true;
  clearTimeout(timer);
  timer = undefined;
  setImmediate(resumeOne);
}

/**
 * Resumes one background piece, then schedules the next on a later loop iteration: the requests that
 * arrived meanwhile are read (and counted) in between. Immediates queued together run in one check
 * phase, so one immediate per piece would have run a burst of them before any request was read.
 */
function resumeOne() {
  scheduled = false;
  const now = performance.now();
  headSince ??= now;
  const waited = now - headSince;
  if (inFlight > 0 && waited < BACKGROUND_WAIT_MAX_MS) {
    timer = setTimeout(schedule, BACKGROUND_WAIT_MAX_MS - waited).unref();
    return;
  }
  headSince = undefined;
  queue.shift()?.();
  schedule();
}

/** Runs `work`, and everything it awaits, in the background lane. */
export const inBackground = <T>(work: () => Promise<T>): Promise<T> => background.run(true, work);

/** Whether the caller runs in the background lane. */
export const inBackgroundLane = () => background.getStore() === true;

/** Counts a request in flight until the function returned is called (again is harmless). */
export function requestStarted(): () => void {
  inFlight += 1;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    inFlight -= 1;
    if (inFlight === 0) schedule();
  };
}

/**
 * An event-loop turn (setImmediate); in the background lane, a place in the queue of background
 * pieces, which resumes one per loop iteration and, while requests are in flight, once none is (the
 * head waits at most BACKGROUND_WAIT_MAX_MS).
 */
export function turn(): Promise<void> {
  if (!inBackgroundLane()) return new Promise((resolve) => { setImmediate(resolve); });
  return new Promise((resolve) => {
    queue.push(resolve);
    schedule();
  });
}
