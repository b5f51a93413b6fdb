import type { CommittedEvent } from '../../subgraphs/platform/events/bus.ts';

/** An event to run, how many events its result covers (itself and those coalesced into it), and its place among them. */
export interface NextEvent { event: CommittedEvent; covers: number; order: number }

/**
 * The events one shared execution has yet to run, oldest first. While its client is over budget
 * they are coalesced into the latest: its query shows the entity's latest state, which covers them
 * all, so at most one waits whatever the rate of events.
 */
export class PendingEvents {
  private events: CommittedEvent[] = [];
  /** Events received so far: a subscriber that joins is pushed only events received after it. */
  private received = 0;
  /** Events coalesced into the one waiting, beyond itself. */
  private folded = 0;
  private coalescing = false;

  get length() { return this.events.length; }
  get count() { return this.received; }

  add(event: CommittedEvent) {
    this.received += 1;
    if (this.coalescing && this.events.length) {
      this.events = [event];
      this.folded += 1;
    } else {
      this.events.push(event);
    }
  }

  /** Over budget: the events waiting become the latest, and so does every event until the next `take`. */
  coalesce() {
    this.folded += Math.max(0, this.events.length - 1);
    this.events = this.events.slice(-1);
    this.coalescing = true;
  }

  take(): NextEvent | undefined {
    const event = this.events.shift();
    if (!event) return undefined;
    const next = { event, covers: this.folded + 1, order: this.received - this.events.length };
    this.folded = 0;
    this.coalescing = false;
    return next;
  }
}
