import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Two lanes of work on one event loop. Requests (counted from arrival to answer by the gateway's
 * foreground plugin) are the foreground; work run through `inBackground` (subscription executions)
 * and everything it awaits is the background. A background turn waits while requests are in flight,
 * so a request's own turns meet no background work between them: with plain turns each of them
 * waited behind a piece of background work, and a request of a few turns took several pieces' time.
 */

/** The longest a background turn waits for the requests in flight: a busy gateway still runs its background work. */
export const BACKGROUND_WAIT_MAX_MS = 25;

const background = new AsyncLocalStorage<true>();
let inFlight = 0;
let waiting: (() => void)[] = [];
let timer: NodeJS.Timeout | undefined;

function release() {
  clearTimeout(timer);
  timer = undefined;
  const resumed = waiting;
  waiting = [];
  for (const resume of resumed) setImmediate(resume);
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
    if (inFlight === 0) release();
  };
}

/**
 * An event-loop turn (setImmediate); in the background lane with requests in flight, once none is
 * (at most BACKGROUND_WAIT_MAX_MS later).
 */
export function turn(): Promise<void> {
  if (inFlight === 0 || !inBackgroundLane()) return new Promise((resolve) => { setImmediate(resolve); });
  timer ??= setTimeout(release, BACKGROUND_WAIT_MAX_MS).unref();
  return new Promise((resolve) => { waiting.push(resolve); });
}
