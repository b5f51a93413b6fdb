import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { inBackground, turn } from '../../subgraphs/platform/lanes.ts';

/**
 * Subscription executions in flight in one process: at most `max`, the others waiting in turn. Each
 * runs in the background lane (subgraphs/platform/lanes.ts) and starts on a turn of its own, so
 * requests (another organisation's included) are served between executions rather than after a
 * burst of them, and while one is in flight the executions' turns wait for it.
 *
 * With `share` under 1 the executions are also paced: the event loop's busy time while one ran (its
 * own work and whatever ran meanwhile) is followed by a rest of (1 - share) / share of it before the
 * next starts, so that executions as costly as a tenant may make them (a large result built and
 * shaped in one piece) never hold the loop end to end: the delay load shedding measures stays that
 * of the longest single one, not of a stream of them. Waiting on a database costs no rest.
 */
export class ExecutionSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly max: number;
  private readonly yielding: boolean;
  private readonly restPerBusyMs: number;
  /** performance.now() before which no execution starts (the rest owed). */
  private resumeAt = 0;
  /** The loop's cumulative busy time (eventLoopUtilization().active) up to which rests were charged. */
  private charged = 0;

  /** `yielding` false and `max` Infinity: every execution at once, as before (SUBSCRIPTIONS_FAN_OUT=per-subscriber). */
  constructor(max: number, yielding = true, share = 1) {
    this.max = max;
    this.yielding = yielding;
    this.restPerBusyMs = share >= 1 ? 0 : (1 - share) / share;
  }

  run<T>(work: () => Promise<T>): Promise<T> {
    return inBackground(() => this.runInTurn(work));
  }

  private async runInTurn<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.max) this.running += 1;
    else await new Promise<void>((resolve) => { this.waiting.push(resolve); });
    try {
      const rest = this.resumeAt - performance.now();
      if (rest > 0) await sleep(rest, undefined, { ref: false });
      else if (this.yielding) await turn();
      if (!this.restPerBusyMs) return await work();
      const started = performance.eventLoopUtilization().active;
      try {
        return await work();
      } finally {
        // Busy time since it started, less what an execution that ended meanwhile was charged already.
        const { active } = performance.eventLoopUtilization();
        const busy = active - Math.max(started, this.charged);
        this.charged = active;
        this.resumeAt = Math.max(this.resumeAt, performance.now()) + busy * this.restPerBusyMs;
      }
    } finally {
      // The slot passes to the next waiting, if any.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
