/**
 * Counts SQL statements as MikroORM logs them, so tests and benchmarks can prove a request costs a
 * constant number of queries. The log text itself is dropped: it may hold personal data.
 */
export interface StatementCounter {
  log: (message: string) => void;
  readonly count: number;
  reset(): void;
}

export function statementCounter(): StatementCounter {
  let count = 0;
  return {
    log: (message: string) => {
      if (/^\[query\]/.test(message) || /\bquery\b/i.test(message.slice(0, 40))) count += 1;
    },
    get count() { return count; },
    reset() { count = 0; },
  };
}
