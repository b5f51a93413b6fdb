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

  private readonly onEnd: () => void;

  /** `onEnd` runs once, however the channel ends. */
  constructor(onEnd: () => void) {
    this.onEnd = onEnd;
  }

  /** Results pushed and not yet pulled. */
  get backlog() { return this.items.length; }
  get closed() { return this.ended; }

  push(item: T) {
    if (this.ended) return;
    if (this.taker) {
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
