/**
 * The results of one subscription on their way to its transport: an async iterator the transport
 * pulls (graphql-ws and graphql-sse both `for await` it) and the engine pushes into. `return()` (the
 * client completed it, the connection closed) ends it at once, even while nothing is waiting, which a
 * generator suspended in an `await` could not.
 */
export class Channel<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  private taker?: (result: IteratorResult<T, undefined>) => void;
  private ended = false;
  /** Where items go as they are pushed once the transport pulls, instead of waiting to be pulled (`sendTo`). */
  private sink?: (item: T) => void;
  private pulled = false;

  private readonly onEnd: () => void;

  /** `onEnd` runs once, however the channel ends. */
  constructor(onEnd: () => void) {
    this.onEnd = onEnd;
  }

  /** Results pushed and not yet pulled. */
  get backlog() { return this.items.length; }
  get closed() { return this.ended; }

  /**
   * From the transport's first pull on, each item is handed to `sink` as it is pushed (and the pull
   * waits only for the end): no promise and no pull per item. A WebSocket writes its frames so.
   */
  sendTo(sink: (item: T) => void) {
    this.sink = sink;
  }

  push(item: T) {
    if (this.ended) return;
    if (this.sink && this.pulled) {
      this.sink(item);
    } else if (this.taker) {
      this.taker({ value: item, done: false });
      this.taker = undefined;
    } else {
      this.items.push(item);
    }
  }

  /** Ends after what was pushed (and `last`, if given) has been pulled. */
  end(last?: T) {
    if (this.ended) return;
    if (last !== undefined) this.push(last);
    this.ended = true;
    this.onEnd();
    if (this.taker) {
      this.taker({ value: undefined, done: true });
      this.taker = undefined;
    }
  }

  next(): Promise<IteratorResult<T, undefined>> {
    if (this.sink && !this.pulled) {
      this.pulled = true;
      for (const item of this.items.splice(0)) this.sink(item);
    }
    if (this.items.length) return Promise.resolve({ value: this.items.shift()!, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => { this.taker = resolve; });
  }

  return(): Promise<IteratorResult<T, undefined>> {
    this.items.length = 0;
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** As `return()`: transports tell an async generator by its having both. */
  throw(): Promise<IteratorResult<T, undefined>> {
    return this.return();
  }

  [Symbol.asyncIterator]() { return this; }
}
