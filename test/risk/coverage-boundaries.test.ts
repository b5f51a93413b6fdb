/**
 * Coverage follows the states' legal boundaries (California 3 nm into the Pacific, Illinois' part of
 * Lake Michigan), made from the shipped outlines into a committed file; FARS records are attributed
 * to their state by their code.
 */
import { createReadStream, readFileSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';
import { describe, expect, it } from 'vitest';
import { farsRow } from '../../subgraphs/risk/data/fars.ts';
import { shippedFarsFiles } from '../../subgraphs/risk/data/load.ts';
import { COVERAGE_BOUNDARIES_FILE, coverageBoundariesText } from '../../subgraphs/risk/geometry/coverage-boundaries-cli.ts';
import { clipToCoverage, stateAt } from '../../subgraphs/risk/geometry/coverage.ts';
import { searchArea } from '../../subgraphs/risk/geometry/wkt.ts';

const coverage = (wkt: string, radius?: number) => clipToCoverage(searchArea(wkt, radius).area);

describe('legal boundaries', () => {
  it('the committed file is what `npm run risk:boundaries` makes from the shipped outlines', () => {
    expect(readFileSync(COVERAGE_BOUNDARIES_FILE, 'utf8') === coverageBoundariesText()).toBe(true);
  }, 60_000);

  it('the shore is covered: the Golden Gate Bridge and Navy Pier, Lake Shore Drive and La Jolla', () => {
    expect(coverage('POINT(-122.4783 37.8199)').status).toBe('COVERED');
    expect(coverage('POINT(-87.6044 41.8917)').status).toBe('COVERED');
    expect(coverage('POINT(-87.6130 41.8890)', 0.005).coveredFraction).toBeGreaterThan(0.99);
    expect(coverage('POINT(-117.2713 32.8503)', 0.005).coveredFraction).toBeGreaterThan(0.99); // La Jolla Cove
    expect(stateAt(-122.4783, 37.8199)?.code).toBe('CA');
    expect(stateAt(-87.6044, 41.8917)?.code).toBe('IL');
  });

  it('stops at three nautical miles, at the neighbours and at the middle of Lake Michigan', () => {
    expect(coverage('POINT(-124.15 38.91)').status).toBe('OUTSIDE'); // 21 nm off Point Arena
    expect(stateAt(-123.75, 38.91)?.code).toBe('CA'); // 2 nm off
    expect(coverage('POINT(-86.6 42.2)').status).toBe('OUTSIDE'); // the lake, Michigan side
    expect(stateAt(-87.3, 42.2)?.code).toBe('IL'); // the lake, Illinois side
    expect(stateAt(-87.4, 41.72)).toBeNull(); // the lake, Indiana side (south of its northern line)
    expect(stateAt(-87.7, 42.6)).toBeNull(); // the lake, Wisconsin side
    expect(stateAt(-124.3, 42.1)).toBeNull(); // off Oregon
    expect(stateAt(-117.2, 32.45)).toBeNull(); // off Mexico
    expect(stateAt(-115.14, 36.17)).toBeNull(); // Las Vegas
  });
});

describe('FARS records by state code', () => {
  it('every shipped California and Illinois record with a position is loaded, case 2014/62538 at Laguna Beach included', async () => {
    const counts = { rows: 0, loaded: 0 };
    let laguna: unknown;
    for (const file of shippedFarsFiles()) {
      for await (const row of createReadStream(file).pipe(createGunzip()).pipe(parse({ columns: true })) as AsyncIterable<Record<string, string>>) {
        counts.rows++;
        const result = farsRow(row);
        if ('crash' in result) counts.loaded++;
        if ('crash' in result && result.crash.id === 'fars-2014-62538') laguna = result.crash;
      }
    }
    expect(counts).toEqual({ rows: 11_297, loaded: 11_297 });
    expect(laguna).toMatchObject({ state: 6, latitude: 33.55605556, longitude: -117.81486389 });
  }, 60_000);
});
