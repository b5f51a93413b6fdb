/** The collection npm start runs once its stack is built (subgraphs/platform/start-up-memory.ts). */
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { releaseStartUpMemory } from '../../subgraphs/platform/start-up-memory.ts';

const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.physical_space_size;

describe('releaseStartUpMemory', () => {
  it('gives back the young generation that start-up grew', () => {
    // Survivors make V8 grow the young generation, as a start-up's long-lived objects do.
    const kept: unknown[] = [];
    for (let i = 0; i < 300_000; i++) kept.push({ i, text: `object ${i}` });
    const grown = newSpace();
    expect(grown).toBeGreaterThan(2 * 1024 ** 2);
    releaseStartUpMemory();
    expect(newSpace()).toBeLessThan(grown / 2);
    expect(kept).toHaveLength(300_000);
  });
});
