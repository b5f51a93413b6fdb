/**
 * The Risk Index answer cache (subgraphs/risk/services/answer-cache.ts) on its own, the answers'
 * version stubbed: keyed by version, area, part and arguments; one evaluation for identical ones in
 * flight; nothing kept without a version (data loading) or with size 0; bounded by bytes.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { AreaQuery } from '../../subgraphs/risk/services/area.ts';

const version = vi.hoisted(() => ({ current: 'v1' as string | null }));
vi.mock('../../subgraphs/risk/data/version.ts', () => ({ riskAnswersVersion: async () => version.current }));
const { createAnswerCache } = await import('../../subgraphs/risk/services/answer-cache.ts');

const area = (key: string, filter: object | null = null) => ({ em: {}, key, filter }) as unknown as AreaQuery;
const counting = () => {
  let runs = 0;
  return { evaluate: async () => ({ run: ++runs }), runs: () => runs };
};

beforeEach(() => { version.current = 'v1'; });

describe('answer cache', () => {
  it('answers an identical lookup from memory, and another area, part or argument by evaluating', async () => {
    const cache = createAnswerCache(1024 * 1024);
    const e = counting();
    expect(await cache.answer(area('a'), 'riskInfo', null, e.evaluate)).toEqual({ run: 1 });
    expect(await cache.answer(area('a'), 'riskInfo', null, e.evaluate)).toEqual({ run: 1 });
    expect(await cache.answer(area('b'), 'riskInfo', null, e.evaluate)).toEqual({ run: 2 });
    expect(await cache.answer(area('a'), 'accidentSummary', null, e.evaluate)).toEqual({ run: 3 });
    expect(await cache.answer(area('a'), 'farsInfo', { limit: 5 }, e.evaluate)).toEqual({ run: 4 });
    expect(await cache.answer(area('a'), 'farsInfo', { limit: 6 }, e.evaluate)).toEqual({ run: 5 });
    expect(await cache.answer(area('a'), 'farsInfo', { limit: 5 }, e.evaluate)).toEqual({ run: 4 });
    expect(cache.stats()).toMatchObject({ hits: 2, misses: 5, shared: 0, entries: 5 });
  });

  it('runs identical evaluations in flight once, and keeps no failure', async () => {
    const cache = createAnswerCache(1024 * 1024);
    const e = counting();
    const answers = await Promise.all([1, 2, 3].map(() => cache.answer(area('a'), 'map', null, e.evaluate)));
    expect(answers).toEqual([{ run: 1 }, { run: 1 }, { run: 1 }]);
    expect(e.runs()).toBe(1);
    expect(cache.stats()).toMatchObject({ misses: 1, shared: 2 });
    const failing = vi.fn(async () => { throw new Error('no'); });
    await expect(cache.answer(area('x'), 'map', null, failing)).rejects.toThrow('no');
    await expect(cache.answer(area('x'), 'map', null, failing)).rejects.toThrow('no');
    expect(failing).toHaveBeenCalledTimes(2);
  });

  it('evaluates again once the version changes (an ingest), and keeps nothing without one (data loading)', async () => {
    const cache = createAnswerCache(1024 * 1024);
    const e = counting();
    await cache.answer(area('a'), 'riskInfo', null, e.evaluate);
    version.current = 'v2';
    expect(await cache.answer(area('a'), 'riskInfo', null, e.evaluate)).toEqual({ run: 2 });
    version.current = null;
    await cache.answer(area('a'), 'riskInfo', null, e.evaluate);
    await cache.answer(area('a'), 'riskInfo', null, e.evaluate);
    expect(e.runs()).toBe(4);
  });

  it('keeps nothing with size 0', async () => {
    const cache = createAnswerCache(0);
    const e = counting();
    await cache.answer(area('a'), 'riskInfo', null, e.evaluate);
    expect(await cache.answer(area('a'), 'riskInfo', null, e.evaluate)).toEqual({ run: 2 });
    expect(cache.stats()).toMatchObject({ hits: 0, entries: 0, bytes: 0 });
  });

  it('holds at most its size in (estimated) bytes, the least recently used going first', async () => {
    const cache = createAnswerCache(4096);
    const big = async () => 'x'.repeat(1500);
    for (const key of ['a', 'b', 'c', 'd']) await cache.answer(area(key), 'map', null, big);
    expect(cache.stats().bytes).toBeLessThanOrEqual(4096);
    expect(cache.stats().entries).toBe(2);
    const e = counting();
    expect(await cache.answer(area('a'), 'map', null, e.evaluate)).toEqual({ run: 1 });
  });

  it('keeps filtered answers in a partition of their own: a flood of distinct filters evicts no unfiltered answer', async () => {
    const cache = createAnswerCache(8192);
    const e = counting();
    const big = async () => 'x'.repeat(1500);
    for (const key of ['a', 'b', 'c']) await cache.answer(area(key), 'map', null, big);
    for (let i = 0; i < 500; i++) await cache.answer(area(`a|hours=${i}`, { hours: [i] }), 'map', null, big);
    // The filtered partition holds a quarter of the size: one answer of 1,756 estimated bytes.
    expect(cache.stats().bytes).toBeLessThanOrEqual(8192 + 2048);
    for (const key of ['a', 'b', 'c']) expect(await cache.answer(area(key), 'map', null, e.evaluate)).toBe('x'.repeat(1500));
    expect(e.runs()).toBe(0);
    expect(await cache.answer(area('a|hours=498', { hours: [498] }), 'map', null, e.evaluate)).toEqual({ run: 1 });
  });
});
