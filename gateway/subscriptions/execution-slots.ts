/**
 * Subscription executions in flight in one process: at most `max`, the others waiting in turn; each
 * starts on an event-loop turn of its own (setImmediate), so requests waiting for the loop (another
 * organisation's included) are served between executions rather than after a burst of them.
 */
export class ExecutionSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly max: number;
  private readonly yielding: boolean;

  /** `yielding` false and `max` Infinity: every execution at once, as before (SUBSCRIPTIONS_FAN_OUT=per-subscriber). */
  constructor(max: number, yielding = true) {
    this.max = max;
    this.yielding = yielding;
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.max) this.running += 1;
    else await new Promise<void>((resolve) => { this.waiting.push(resolve); });
    try {
      if (this.yielding) await new Promise((resolve) => { setImmediate(resolve); });
      return await work();
    } finally {
      // The slot passes to the next waiting, if any.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
