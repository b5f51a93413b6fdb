/**
 * The H3 resolution a caller asks for (`resolution`: 5, 7, 9) on GraphQL `riskIndex` and the REST paths:
 * the cells at that resolution, validated like every argument, and held to the cell budget before the work.
 */
import { getResolution } from 'h3-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { areaPoolFor } from '../../subgraphs/risk/geometry/pool.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const BASE = '/riskIndex/v1';
const CHICAGO = 'POLYGON((-87.95 41.7, -87.68 41.7, -87.68 42.0, -87.95 42.0, -87.95 41.7))';
// California's bounding box: 77,683 cells at resolution 7 once clipped to the state (2.8 s to list them).
const CALIFORNIA = 'POLYGON((-124.48 32.53, -114.13 32.53, -114.13 42.01, -124.48 42.01, -124.48 32.53))';
let t: TestStack;

const get = (path: string, params: Record<string, string | number>) =>
  t.request('GET', `${BASE}/${path}?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}`);
const riskDb = () => t.stack.subgraphs.find((s) => s.name === 'risk')!.db;
const AREA = 'query($w: WKT!, $r: Int) { riskIndex(wkt: $w, resolution: $r) { area { resolution cellsTouched } riskInfo { index fatalCrashes } } }';

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['risk'] });
  await riskDataLoaded(riskDb().orm.em);
}, 600_000);
afterAll(async () => { await t?.close(); });

describe('riskIndex(resolution:) on GraphQL', () => {
  it('gives the cells of the resolution asked; without it the automatic choice; the area figures stay those of the area', async () => {
    const auto = await t.graphql(AREA, { w: CHICAGO }, null);
    expect(auto.errors).toBeUndefined();
    expect(auto.data.riskIndex.area.resolution).toBe(7);
    const byRes: Record<number, { area: { resolution: number; cellsTouched: number }; riskInfo: { index: number; fatalCrashes: number } }> = {};
    for (const r of [5, 7, 9]) {
      const res = await t.graphql(AREA, { w: CHICAGO, r }, null);
      expect(res.errors, String(r)).toBeUndefined();
      byRes[r] = res.data.riskIndex;
      expect(byRes[r].area.resolution).toBe(r);
    }
    expect(byRes[7].area.cellsTouched).toBe(auto.data.riskIndex.area.cellsTouched);
    expect(byRes[9].area.cellsTouched).toBeGreaterThan(3000); // past the automatic bound: asked for
    expect(byRes[5].area.cellsTouched).toBeLessThan(byRes[7].area.cellsTouched);
    // The crashes inside the exact area do not depend on the cells.
    expect(byRes[9].riskInfo.fatalCrashes).toBe(byRes[7].riskInfo.fatalCrashes);
    expect(byRes[5].riskInfo.fatalCrashes).toBe(byRes[7].riskInfo.fatalCrashes);
    // The cells of the export at the resolution asked.
    const page = await t.graphql('query($w: WKT!) { riskIndex(wkt: $w, resolution: 9) { exportPage(data: CELLS, format: GEOJSON, first: 50) { content nextUrl } } }', { w: CHICAGO }, null);
    const cells = JSON.parse(page.data.riskIndex.exportPage.content) as { features: { id: string }[] };
    expect(cells.features).toHaveLength(50);
    expect(cells.features.every((f) => getResolution(f.id) === 9)).toBe(true);
    expect(new URL(page.data.riskIndex.exportPage.nextUrl, 'http://x').searchParams.get('resolution')).toBe('9');
  });

  it('refuses any other value with BAD_USER_INPUT naming resolution', async () => {
    for (const r of [8, 0, -7, 15, 10_000]) {
      const res = await t.graphql(AREA, { w: CHICAGO, r }, null);
      expect(res.errors?.[0].extensions?.code, String(r)).toBe('BAD_USER_INPUT');
      expect(res.errors?.[0].message).toMatch(/resolution must be one of 5, 7, 9/);
    }
    const float = await t.graphql('{ riskIndex(wkt: "POINT(-87.6 41.8)", resolution: 7.5) { area { resolution } } }', {}, null);
    expect(float.errors?.[0].message).toMatch(/Int/);
  });

  it('refuses an area with too many cells at the resolution asked before listing them (422 GEOMETRY_TOO_COMPLEX, limit cells)', async () => {
    for (const r of [7, 9]) {
      const started = performance.now();
      const res = await t.graphql(AREA, { w: CALIFORNIA, r }, null);
      expect(res.errors?.[0].extensions, String(r)).toMatchObject({ code: 'GEOMETRY_TOO_COMPLEX', limit: 'cells', max: 10_000, resolution: r });
      expect(res.errors?.[0].extensions?.got as number).toBeGreaterThan(r === 7 ? 77_000 : 3_000_000);
      expect(res.errors?.[0].message).toMatch(new RegExp(`too many H3 cells at resolution ${r}`));
      // Estimated, not enumerated: listing the 77,683 cells at 7 alone takes some 3 s.
      expect(performance.now() - started).toBeLessThan(1500);
    }
    const coarse = await t.graphql(AREA, { w: CALIFORNIA, r: 5 }, null);
    expect(coarse.errors).toBeUndefined();
    expect(coarse.data.riskIndex.area).toMatchObject({ resolution: 5 });
    const auto = await t.graphql(AREA, { w: CALIFORNIA }, null);
    expect(auto.data.riskIndex.area).toEqual(coarse.data.riskIndex.area);
  });
});

describe('resolution on REST', () => {
  it('every path takes it; the resolved-area cache keeps each resolution apart; the export pages carry it', async () => {
    const pool = areaPoolFor(riskDb().orm.em);
    pool.forgetAreas();
    const auto = await get('riskInfo', { geometry: CHICAGO });
    const fine = await get('riskInfo', { geometry: CHICAGO, resolution: 9 });
    expect([auto.status, fine.status]).toEqual([200, 200]);
    expect(auto.body.area.resolution).toBe(7);
    expect(fine.body.area.resolution).toBe(9);
    expect(fine.body.riskInfo.riskiestCells.every((c: { cell: string; resolution: number }) => c.resolution === 9 && getResolution(c.cell) === 9)).toBe(true);
    expect(pool.stats().cachedAreas).toBe(2);
    const again = await get('accidentSummary', { geometry: CHICAGO, resolution: 9 });
    expect(again.body.area).toEqual(fine.body.area);
    expect(pool.stats().cachedAreas).toBe(2);

    // The cell export, page by page through its Link header: every cell at 9, as many as cellsTouched.
    let next: string | null = `${BASE}/export/cells?${new URLSearchParams({ geometry: CHICAGO, resolution: '9', limit: '4000', format: 'csv' })}`;
    const cells: string[] = [];
    while (next) {
      const res: { status: number; headers: Headers; body: string } = await t.request<string>('GET', next);
      expect(res.status).toBe(200);
      const lines = String(res.body).trim().split('\r\n');
      const column = lines[0].split(',').indexOf('cell');
      cells.push(...lines.slice(1).map((l) => l.split(',')[column]));
      next = res.headers.get('link')?.match(/^<([^>]+)>; rel="next"$/)?.[1] ?? null;
      if (next) expect(new URL(next, 'http://x').searchParams.get('resolution')).toBe('9');
    }
    expect(cells).toHaveLength(fine.body.area.cellsTouched);
    expect(new Set(cells).size).toBe(cells.length);
    expect(cells.every((c) => getResolution(c) === 9)).toBe(true);

    // farsInfo's next page keeps it too.
    const fars = await get('farsInfo', { geometry: CHICAGO, resolution: 5, limit: 10 });
    expect(fars.body.area.resolution).toBe(5);
    const link = fars.headers.get('link')!.match(/^<([^>]+)>; rel="next"$/)![1];
    expect(new URL(link, 'http://x').searchParams.get('resolution')).toBe('5');
    expect((await t.request('GET', link)).body.area.resolution).toBe(5);
  });

  it('400 for a value other than 5, 7, 9; 422 before the work for too many cells', async () => {
    for (const r of ['8', '7.5', 'abc', '-9', '1e9']) {
      const res = await get('riskInfo', { geometry: CHICAGO, resolution: r });
      expect(res.status, r).toBe(400);
      expect(JSON.stringify(res.body)).toMatch(/resolution/);
    }
    const res = await get('export/cells', { geometry: CALIFORNIA, resolution: 7 });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ limit: 'cells', max: 10_000, resolution: 7 });
  });
});
