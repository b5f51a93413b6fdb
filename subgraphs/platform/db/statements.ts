import { AsyncLocalStorage } from 'node:async_hooks';
import { DefaultLogger, type LogContext, type LoggerOptions } from '@mikro-orm/core';

const background = new AsyncLocalStorage<true>();

/** Runs `work` as the process's own background work (an outbox relay's round): its statements are not a request's, and are not counted. */
export const inBackground = <T>(work: () => Promise<T>): Promise<T> => background.run(true, work);

/**
 * Counts SQL statements as MikroORM runs them, so tests and benchmarks can prove a request costs a
 * constant number of queries. The query text is never formatted or written (it may hold personal
 * data, and formatting it per statement was a visible share of a request's CPU). Background work
 * (`inBackground`) is left out: it runs whenever it must, not because of a request.
 */
export interface StatementCounter {
  /** MikroORM's `loggerFactory`. */
  loggerFactory: (options: LoggerOptions) => DefaultLogger;
  readonly count: number;
  reset(): void;
}

export function statementCounter(): StatementCounter {
  let count = 0;
  class CountingLogger extends DefaultLogger {
    override logQuery(context: LogContext & { query: string }) {
      // The slow-query log reports a statement already counted.
      if ((context.namespace ?? 'query') === 'query' && !background.getStore()) count += 1;
    }
  }
  return {
    loggerFactory: (options) => new CountingLogger(options),
    get count() { return count; },
    reset() { count = 0; },
  };
}
