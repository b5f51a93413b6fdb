import { booleanPointInPolygon } from '@turf/turf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../subgraphs/platform/errors.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { fitModel, MODEL_VERSION, riskModel, scoreArea, weightOf } from '../../subgraphs/risk/data/model.ts';
import { DEFAULT_BUDGET } from '../../subgraphs/risk/geometry/budget.ts';
import { countInside } from '../../subgraphs/risk/geometry/inside.ts';
import { searchArea } from '../../subgraphs/risk/geometry/wkt.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

/** The fit of the real FARS 2013-2015 data, rounded (see docs/risk-index.md). */
const MODEL = fitModel({ weight: 11_278 * 1.05, rateSquares: 119, medianRate: 0.0653 }, 574_000, 2013, 2015);

describe('the index model (empirical Bayes, fixed reference)', () => {
  it('fits a prior whose mean is the covered states\' mean rate, weighing a fraction of a crash', () => {
    expect(MODEL).toMatchObject({ version: MODEL_VERSION, years: 3, firstYear: 2013, lastYear: 2015, referenceRate: 0.0653 });
    expect(MODEL.meanRate).toBeCloseTo(11_278 * 1.05 / 574_000 / 3, 6);
    expect(MODEL.priorWeight / MODEL.priorExposure).toBeCloseTo(MODEL.meanRate, 9);
    expect(MODEL.priorWeight).toBeGreaterThan(0);
    expect(MODEL.priorWeight).toBeLessThan(1);
  });

  it('a large area scores its own rate against the reference: 50 at the reference rate, whatever its size', () => {
    for (const km2 of [1_000, 10_000, 100_000]) {
      const atReference = scoreArea(MODEL, MODEL.referenceRate * km2 * 3, km2);
      expect(atReference.index, `${km2} km²`).toBeCloseTo(50, 0);
      expect(atReference.credibility).toBeGreaterThan(0.99);
    }
  });

  it('a small area with one crash does not jump to the top: its rate is pulled towards the prior', () => {
    const road = scoreArea(MODEL, weightOf(1, 1), 0.01);
    expect(road.rate / MODEL.referenceRate).toBeGreaterThan(400);
    expect(road.index).toBeLessThan(80);
    expect(road.credibility).toBeLessThan(0.01);
    const none = scoreArea(MODEL, 0, 0.01);
    expect(none.index).toBeGreaterThan(0);
    expect(road.index - none.index).toBeLessThan(70);
  });

  it('is monotonic in the crashes for one area, and a data set without crashes scores 0', () => {
    const indices = [0, 1, 2, 5, 10, 50].map((w) => scoreArea(MODEL, w, 5).index);
    expect(indices).toEqual([...indices].sort((a, b) => a - b));
    expect(new Set(indices).size).toBe(indices.length);
    const empty = fitModel({ weight: 0, rateSquares: 0, medianRate: 0 }, 574_000, null, null);
    expect(scoreArea(empty, 0, 5).index).toBe(0);
  });

  it('caps the prior at one crash\'s weight when the data barely vary (a small file)', () => {
    const flat = fitModel({ weight: 10, rateSquares: 0, medianRate: 0.06 }, 574_000, 2015, 2015);
    expect(flat.priorWeight).toBeCloseTo(1, 9);
  });
});

describe('crashes inside the exact outline', () => {
  const square = searchArea('POLYGON((-87.7 41.8, -87.6 41.8, -87.6 41.9, -87.7 41.9, -87.7 41.8))').area;
  const points = Float64Array.from([-87.65, 41.85, 2, -87.69, 41.81, 1, -87.59, 41.85, 4, -87.65, 41.91, 1]);

  it('counts the crashes and fatalities inside, not those of the cells around it', () => {
    expect(countInside([square], points, DEFAULT_BUDGET)).toEqual({ crashes: 2, fatalities: 3 });
  });

  it('refuses the work over the pointTests budget (422 naming the limit)', () => {
    try {
      countInside([square], points, { ...DEFAULT_BUDGET, pointTests: 9 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).extensions).toMatchObject({ code: 'GEOMETRY_TOO_COMPLEX', limit: 'pointTests', max: 9, got: 10 });
    }
  });
});

describe('on the shipped FARS 2013-2015 crashes', () => {
  const DOWNTOWN_LA = 'POINT(-118.25 34.05)';
  const INFO = 'index modelVersion areaKm2 years firstYear lastYear fatalCrashes fatalities rate smoothedRate credibility priorRate referenceRate emptyCellIndex riskiestCells { riskIndex fatal fatalities areaKm2 }';
  let t: TestStack;
  const risk = () => t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em;
  const report = async (wkt: string, radius: number) => {
    const res = await t.graphql(`query($w: WKT!, $r: Float) { riskIndex(wkt: $w, radius: $r) { area { resolution coveredKm2 } riskInfo { ${INFO} } } }`, { w: wkt, r: radius }, null);
    expect(res.errors).toBeUndefined();
    return res.data.riskIndex;
  };

  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['risk'] });
    await riskDataLoaded(risk());
  }, 600_000);
  afterAll(async () => { await t?.close(); });

  it('downtown Los Angeles: the index moves by a few points from radius 0.08 (resolution 9) to 0.1 (resolution 7)', async () => {
    const [small, large] = [await report(DOWNTOWN_LA, 0.08), await report(DOWNTOWN_LA, 0.1)];
    expect([small.area.resolution, large.area.resolution]).toEqual([9, 7]);
    expect(Math.abs(small.riskInfo.index - large.riskInfo.index)).toBeLessThanOrEqual(3);
    expect(large.riskInfo.areaKm2).toBeCloseTo(large.area.coveredKm2, 2);
    expect(large.riskInfo).toMatchObject({ modelVersion: MODEL_VERSION, years: 3, firstYear: 2013, lastYear: 2015 });
    expect(large.riskInfo.referenceRate).toBe(small.riskInfo.referenceRate);
    expect(large.riskInfo.index).toBeGreaterThan(50);
  });

  it('counts the crashes inside the exact circle: its FARS records tested against the buffered outline', async () => {
    const res = await t.request('GET', `/riskIndex/v1/all?${new URLSearchParams({ geometry: DOWNTOWN_LA, radius: '0.02', limit: '1000' })}`);
    expect(res.status).toBe(200);
    const { riskInfo, farsInfo } = res.body;
    expect(farsInfo.returned).toBe(farsInfo.total);
    const outline = searchArea(DOWNTOWN_LA, 0.02).area;
    const inside = farsInfo.records.filter((r: { LONGITUD: number; LATITUDE: number }) => booleanPointInPolygon([r.LONGITUD, r.LATITUDE], outline));
    expect(inside.length).toBeLessThan(farsInfo.total);
    expect(riskInfo.fatalCrashes).toBe(inside.length);
    expect(riskInfo.fatalities).toBe(inside.reduce((s: number, r: { FATALS: number }) => s + r.FATALS, 0));
    expect(riskInfo.rate).toBeCloseTo(weightOf(riskInfo.fatalCrashes, riskInfo.fatalities) / riskInfo.areaKm2 / 3, 3);
    expect(riskInfo).toMatchObject({ modelVersion: MODEL_VERSION, years: 3, firstYear: 2013, lastYear: 2015 });
  });

  it('documents modelVersion and the rates in the OpenAPI answer of /riskInfo, its example (a real answer) carries them, and so does an answer outside coverage', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    const content = doc.paths['/riskIndex/v1/riskInfo'].get.responses['200'].content['application/json'];
    const properties = doc.components.schemas[content.schema.properties.riskInfo.$ref.split('/').pop()].properties;
    for (const field of ['index', 'modelVersion', 'areaKm2', 'rate', 'smoothedRate', 'credibility', 'priorRate', 'referenceRate', 'firstYear', 'lastYear']) {
      expect(properties[field], field).toBeDefined();
    }
    const outside = await t.request('GET', `/riskIndex/v1/riskInfo?${new URLSearchParams({ geometry: 'POINT(-115.14 36.17)', radius: '0.01' })}`);
    expect(content.example.riskInfo).toMatchObject({ modelVersion: MODEL_VERSION, years: 3, firstYear: 2013, lastYear: 2015 });
    expect(content.example.riskInfo.index).toEqual(expect.any(Number));
    expect(outside.body.riskInfo).toMatchObject({ index: null, modelVersion: MODEL_VERSION, areaKm2: 0, rate: null });
  });

  it('stores every cell\'s index from the same model as the area\'s, fitted from the stored aggregates', async () => {
    const model = await riskModel(risk());
    const { riskInfo } = await report('POINT(-87.6298 41.8781)', 0.02);
    expect(riskInfo.referenceRate).toBeCloseTo(model.referenceRate, 4);
    expect(riskInfo.priorRate).toBeCloseTo(model.meanRate, 6);
    for (const cell of riskInfo.riskiestCells) {
      expect(cell.riskIndex).toBeCloseTo(scoreArea(model, weightOf(cell.fatal, cell.fatalities), cell.areaKm2).index, 0);
    }
    expect(riskInfo.emptyCellIndex).toBeGreaterThan(0);
    expect(riskInfo.emptyCellIndex).toBeLessThan(riskInfo.riskiestCells.at(-1).riskIndex);
  });
});
