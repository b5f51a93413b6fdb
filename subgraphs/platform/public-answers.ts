/** Use of a subgraph's answer cache since its start. */
export interface AnswerCacheStats { hits: number; shared: number; misses: number; entries: number; bytes: number }

/**
 * What the gateway sees of a subgraph whose answers are public and versioned (the Risk Index) when
 * it runs in the gateway's process: the version its answers are a function of (REST ETags before
 * evaluation) and its answer cache's use (metrics).
 */
export interface PublicAnswers {
  /** Null while unknown (the data are loading). */
  version(): Promise<string | null>;
  stats(): AnswerCacheStats | null;
}
