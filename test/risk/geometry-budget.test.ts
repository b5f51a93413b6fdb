import { describe, expect, it } from 'vitest';
import { AppError } from '../../subgraphs/platform/errors.ts';
import { checkBudget, DEFAULT_BUDGET, estimateCost, type BudgetLimit } from '../../subgraphs/risk/geometry/budget.ts';
import { parseWkt, searchArea } from '../../subgraphs/risk/geometry/wkt.ts';
import { zigzag } from '../support/zigzag.ts';

/** The reproduction: x alternating -124 / -114, y stepping 0.0018 from 33. */
/** A 5,000-position GPS trace along ~5 degrees of road in California, wiggling. */
const route = (n: number) => `LINESTRING(${Array.from({ length: n }, (_, i) => `${(-122 + (i / n) * 5 + Math.sin(i / 7) * 0.01).toFixed(5)} ${(37 + (i / n) * 1.5 + Math.cos(i / 5) * 0.01).toFixed(5)}`).join(', ')})`;

function refusal(fn: () => unknown): AppError {
  try { fn(); } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected GEOMETRY_TOO_COMPLEX');
}

function expectLimit(fn: () => unknown, limit: BudgetLimit, max: number) {
  const error = refusal(fn);
  expect(error.code).toBe('GEOMETRY_TOO_COMPLEX');
  expect(error.extensions).toMatchObject({ limit, max, got: expect.any(Number) });
  expect((error.extensions.got as number)).toBeGreaterThan(max);
  expect(error.message).toMatch(new RegExp(`limit: ${limit}, max ${max}, got \\d+`));
}

describe('geometry budget (checked before buffering)', () => {
  it('vertices: more positions than the limit', () => {
    expectLimit(() => searchArea(zigzag(5600), 5), 'vertices', 5000);
    expectLimit(() => searchArea('LINESTRING(-120 35, -119 35, -118 35)', 0.01, { ...DEFAULT_BUDGET, vertices: 2 }), 'vertices', 2);
  });

  it('areaKm2: the bounding box grown by the radius', () => {
    // A point with radius 5 degrees is about a million km²; the whole width of the US is far more.
    expectLimit(() => checkBudget(parseWkt('LINESTRING(-124 30, -70 45)'), 5), 'areaKm2', 5_000_000);
    expectLimit(() => searchArea('POINT(-119 36)', 5, { ...DEFAULT_BUDGET, areaKm2: 100_000 }), 'areaKm2', 100_000);
  });

  it('cells: the covered part of that box in coarsest H3 cells', () => {
    expectLimit(() => searchArea('POINT(-119 36)', 1, { ...DEFAULT_BUDGET, cells: 50 }), 'cells', 50);
    // Outside coverage no cell is needed, whatever the size.
    expect(estimateCost(parseWkt('POINT(-100 40)'), 3).cells).toBe(0);
  });

  it('bufferedVertices: the issue reproductions (zig-zags that double back within the radius)', () => {
    expectLimit(() => searchArea(zigzag(600), 5), 'bufferedVertices', 200_000);
    // Several times: simplifying it overflowed the stack once the code was optimised (a 500 before).
    for (let i = 0; i < 4; i++) expectLimit(() => searchArea(zigzag(5000), 5), 'bufferedVertices', 200_000);
    expectLimit(() => searchArea(zigzag(600), 0.01, { ...DEFAULT_BUDGET, bufferedVertices: 1000 }), 'bufferedVertices', 1000);
  });

  it('a polygon used as it is is not buffered, so only its size counts', () => {
    const cost = estimateCost(parseWkt('POLYGON((-87.95 41.7, -87.68 41.7, -87.68 42.0, -87.95 42.0, -87.95 41.7))'), null);
    expect(cost).toMatchObject({ vertices: 5, bufferedVertices: 0 });
    expect(cost.areaKm2).toBeGreaterThan(500);
    expect(cost.areaKm2).toBeLessThan(1500);
  });

  it('ordinary areas pass: a 5,000-position route with the default radius, a corridor, a city, a point with the largest radius', () => {
    expect(searchArea(route(5000)).area.geometry.type).toMatch(/Polygon/);
    expect(searchArea('LINESTRING(-87.6766 41.8813, -87.6718 41.8814, -87.6620 41.8816)', 0.002).radius).toBe(0.002);
    expect(searchArea('POLYGON((-87.95 41.7, -87.68 41.7, -87.68 42.0, -87.95 42.0, -87.95 41.7))').radius).toBeNull();
    expect(searchArea('POINT(-119 36)', 5).radius).toBe(5);
  });
});
