import { LRUCache } from 'lru-cache';
import { riskAnswersVersion } from '../data/version.ts';
import type { EntityManager } from '@mikro-orm/core';
import type { AnswerCacheStats, PublicAnswers } from '../../platform/public-answers.ts';
import type { AreaQuery } from './area.ts';

/**
 * Evaluated parts of public Risk Index reports (riskInfo, accidentSummary, a farsInfo page, the map,
 * ...), kept for every caller: they depend only on the area, the part's arguments and the answers'
 * version (data, model, code: data/version.ts), which is in the key, so an ingest invalidates them.
 * Bounded by bytes (RISK_ANSWER_CACHE_MB; 0 keeps none); identical evaluations in flight run once.
 * Never real-time traffic, never while the data load (no version then). Answers under a crash filter
 * go to a partition of their own, FILTERED_SHARE of that size on top of it: filter combinations are
 * countless, and a caller cycling through them evicts only other filtered answers.
 */
export interface AnswerCache {
  answer<T>(q: AreaQuery, part: string, args: unknown, evaluate: () => Promise<T>): Promise<T>;
  /** Lookups answered from the cache, from an identical evaluation in flight, or evaluated. */
  stats(): AnswerCacheStats;
  clear(): void;
}

/** Estimated bytes of an answer: its JSON (a map is a string). */
const sizeOf = (value: unknown) => 256 + (typeof value === 'string' ? value.length : JSON.stringify(value)?.length ?? 0);

type Entry = { value: unknown };
type Evaluate = () => Promise<unknown>;

/** The filtered answers' partition, as a share of the unfiltered answers' size. */
export const FILTERED_SHARE = 0.25;

// lru-cache's fetch runs identical evaluations in flight once (status `inflight`) and keeps no failure.
const partition = (maxBytes: number) => (maxBytes > 0 ? new LRUCache<string, Entry, Evaluate>({
  maxSize: maxBytes, sizeCalculation: (e) => sizeOf(e.value),
  fetchMethod: async (_key, _stale, { context: evaluate }) => ({ value: await evaluate() }),
}) : null);

export function createAnswerCache(maxBytes: number): AnswerCache {
  const stats = { hits: 0, shared: 0, misses: 0 };
  const unfiltered = partition(maxBytes);
  const filtered = partition(Math.floor(maxBytes * FILTERED_SHARE));
  const partitions = [unfiltered, filtered];
  const counted = { hit: 'hits', inflight: 'shared', miss: 'misses' } as const;
  return {
    async answer<T>(q: AreaQuery, part: string, args: unknown, evaluate: () => Promise<T>): Promise<T> {
      const cache = q.filter ? filtered : unfiltered;
      const version = cache && await riskAnswersVersion(q.em);
      if (!cache || !version) return evaluate();
      const status: LRUCache.Status<string, Entry, Evaluate> = {};
      const entry = await cache.fetch(`${version}|${q.key}|${part}|${JSON.stringify(args ?? null)}`, { context: evaluate, status });
      const fetched = status.fetch;
      if (fetched === 'hit' || fetched === 'inflight' || fetched === 'miss') stats[counted[fetched]] += 1;
      return entry!.value as T;
    },
    stats: () => ({
      ...stats, entries: partitions.reduce((n, c) => n + (c?.size ?? 0), 0), bytes: partitions.reduce((n, c) => n + (c?.calculatedSize ?? 0), 0),
    }),
    clear: () => partitions.forEach((c) => c?.clear()),
  };
}

/** The cache of each database's risk subgraph (keyed by the ORM's configuration, shared by its forks). */
const caches = new WeakMap<object, AnswerCache>();

export const registerAnswerCache = (em: { config: object }, cache: AnswerCache) => { caches.set(em.config, cache); };

/** The database's answer cache; none registered (a CLI, a unit test) evaluates every time. */
export const answerCacheFor = (em: { config: object }): AnswerCache | undefined => caches.get(em.config);

/** A part of the report, from the cache when it holds it. */
export const cachedAnswer = <T>(q: AreaQuery, part: string, args: unknown, evaluate: () => Promise<T>): Promise<T> =>
  answerCacheFor(q.em)?.answer(q, part, args, evaluate) ?? evaluate();

/** What the gateway sees of the risk subgraph in its process: the answers' version and the cache's use. */
export const riskAnswers = (em: EntityManager): PublicAnswers => ({
  version: () => riskAnswersVersion(em),
  stats: () => answerCacheFor(em)?.stats() ?? null,
});
