import { getIssues } from '@placemarkio/check-geojson';
import { booleanClockwise } from '@turf/turf';
import { parse } from 'csv-parse/sync';
import type { FeatureCollection, Point, Polygon } from 'geojson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRiskArea } from '../../subgraphs/risk/export/url.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { stateBoundaries } from '../../subgraphs/risk/geometry/coverage.ts';
import { geojsonToWKT } from '@terraformer/wkt';
import { startTestStack, type TestStack } from '../support/stack.ts';

const BASE = '/riskIndex/v1';
const box = (w: number, s: number, e: number, n: number) => `POLYGON((${w} ${s}, ${e} ${s}, ${e} ${n}, ${w} ${n}, ${w} ${s}))`;
const CHICAGO = box(-87.95, 41.7, -87.68, 42.0);
const LA_METRO = box(-118.95, 33.7, -117.65, 34.82);
const LAS_VEGAS = 'POINT(-115.14 36.17)';
const CALIFORNIA = geojsonToWKT(stateBoundaries()[0].feature.geometry);

type Collection<G extends Polygon | Point> = FeatureCollection<G, Record<string, string | number | null>> & {
  numberMatched: number; numberReturned: number; links: { rel: string; href: string; type: string }[]; crs?: unknown;
};
type Record_ = Record<string, string | number | null>;

let t: TestStack;
const url = (path: string, params: Record<string, string | number>) =>
  `${BASE}/${path}?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}`;
const get = (path: string, params: Record<string, string | number>, headers?: Record<string, string>) => t.request('GET', url(path, params), { headers });
/** The target of `Link: <...>; rel="next"`, or null. */
const nextOf = (link: string | null) => link?.match(/^<([^>]+)>; rel="next"$/)?.[1] ?? null;
/** A CSV as its header and records, numbers left as text (the comparisons say how each reads back). */
const csvRows = (text: string) => parse(text, { columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
const asCsv = (v: string | number | null) => (v === null ? '' : String(v));

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['risk'] });
  await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
}, 600_000);
afterAll(async () => {
  expect(t.contract.violations).toEqual([]);
  await t?.close();
});

describe('cell exports', () => {
  it('GeoJSON: a valid RFC 7946 FeatureCollection of every cell of the area, rings closed and counter-clockwise, longitude first, figures as in riskInfo', async () => {
    const info = (await get('riskInfo', { geometry: CHICAGO })).body;
    const res = await get('export/cells', { geometry: CHICAGO, format: 'geojson' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/geo+json');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="risk-index-cells.geojson"');
    expect(res.headers.get('link')).toBeNull();
    const text = JSON.stringify(res.body);
    expect(getIssues(text)).toEqual([]);
    const fc = res.body as Collection<Polygon>;
    expect(fc.type).toBe('FeatureCollection');
    expect(fc.crs).toBeUndefined();
    expect(fc).toMatchObject({ numberMatched: info.area.cellsTouched, numberReturned: info.area.cellsTouched, links: [] });
    expect(fc.features).toHaveLength(info.area.cellsTouched);
    expect(new Set(fc.features.map((f) => f.properties.cell)).size).toBe(fc.features.length);
    for (const f of fc.features) {
      const [ring, ...holes] = f.geometry.coordinates;
      expect(holes).toEqual([]);
      expect(ring.length).toBeGreaterThanOrEqual(7);
      expect(ring[ring.length - 1]).toEqual(ring[0]);
      expect(booleanClockwise(ring)).toBe(false);
      for (const [lon, lat] of ring) {
        expect(lon).toBeGreaterThan(-88.1);
        expect(lon).toBeLessThan(-87.5);
        expect(lat).toBeGreaterThan(41.6);
        expect(lat).toBeLessThan(42.1);
      }
      expect(f.properties.resolution).toBe(info.area.resolution);
    }
    const byCell = new Map(fc.features.map((f) => [f.properties.cell, f.properties]));
    for (const cell of info.riskInfo.riskiestCells) {
      const { weightedCrashesPerYear: _w, exposureMvkt: _e, ...figures } = cell;
      expect(byCell.get(cell.cell)).toEqual(figures);
    }
    // The cells hold every crash in them; riskInfo counts those inside the exact outline, accidentSummary the cells'.
    const summary = (await get('accidentSummary', { geometry: CHICAGO })).body.accidentSummary;
    const sum = (k: string) => fc.features.reduce((s, f) => s + Number(f.properties[k]), 0);
    expect(sum('fatal')).toBe(summary.fatal);
    expect(sum('fatalities')).toBe(summary.fatalities);
    expect(sum('fatal')).toBeGreaterThanOrEqual(info.riskInfo.fatalCrashes);
    expect(fc.features.filter((f) => Number(f.properties.fatal) > 0 || Number(f.properties.injury) > 0)).toHaveLength(info.riskInfo.cellsWithCrashes);
  });

  it('CSV (chosen by Accept): RFC 4180 with a header row, every cell with its polygon as WKT, the same figures as the GeoJSON', async () => {
    const geojson = (await get('export/cells', { geometry: CHICAGO })).body as Collection<Polygon>;
    const res = await get('export/cells', { geometry: CHICAGO }, { accept: 'text/csv' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="risk-index-cells.csv"');
    const text = res.body as string;
    expect(text.split('\r\n')[0]).toBe('cell,resolution,riskIndex,latitude,longitude,fatal,injury,propertyDamageOnly,fatalities,areaKm2,fatalCrashesPerKm2Year,fatalitiesPerKm2Year,wkt');
    expect(text.endsWith('\r\n')).toBe(true);
    const rows = csvRows(text);
    expect(rows).toHaveLength(geojson.features.length);
    geojson.features.forEach((f, i) => {
      const { wkt, ...figures } = rows[i];
      expect(figures).toEqual(Object.fromEntries(Object.entries(f.properties).map(([k, v]) => [k, asCsv(v)])));
      // A WKT polygon holds commas: the field is quoted, and reads back whole.
      expect(wkt).toBe(`POLYGON((${f.geometry.coordinates[0].map(([lon, lat]) => `${lon} ${lat}`).join(', ')}))`);
    });
    expect(text).toContain('"POLYGON((');
  });

  it('pages with a cursor when asked for fewer cells: the Link and links walk every cell once, in H3 index order', async () => {
    const all = ((await get('export/cells', { geometry: CHICAGO })).body as Collection<Polygon>).features.map((f) => f.properties.cell);
    const seen: (string | number | null)[] = [];
    let next: string | null = url('export/cells', { geometry: CHICAGO, limit: 50 });
    let pages = 0;
    while (next) {
      const res = await t.request('GET', next);
      expect(res.status).toBe(200);
      const fc = res.body as Collection<Polygon>;
      expect(fc.numberMatched).toBe(all.length);
      seen.push(...fc.features.map((f) => f.properties.cell));
      next = nextOf(res.headers.get('link'));
      expect(fc.links).toEqual(next ? [{ rel: 'next', type: 'application/geo+json', href: next }] : []);
      pages += 1;
    }
    expect(pages).toBe(Math.ceil(all.length / 50));
    expect(seen).toEqual(all);
    expect([...all].sort()).toEqual(all);
  });
});

describe('crash exports', () => {
  it('GeoJSON points and CSV rows of every fatal crash: each FARS field as farsInfo gives it, pages walked through the Link header', async () => {
    const fars = (await get('farsInfo', { geometry: CHICAGO, limit: 1000 })).body.farsInfo;
    expect(fars.pageInfo.hasNextPage).toBe(false);
    expect(fars.records).toHaveLength(fars.total);

    const features: Collection<Point>['features'] = [];
    let next: string | null = url('export/crashes', { geometry: CHICAGO, limit: 400 });
    while (next) {
      const res = await t.request('GET', next);
      expect(res.headers.get('content-type')).toBe('application/geo+json');
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="risk-index-crashes.geojson"');
      expect(getIssues(JSON.stringify(res.body))).toEqual([]);
      const fc = res.body as Collection<Point>;
      expect(fc.numberMatched).toBe(fars.total);
      features.push(...fc.features);
      next = nextOf(res.headers.get('link'));
    }
    expect(features.map((f) => f.properties)).toEqual(fars.records);
    for (const f of features) expect(f.geometry.coordinates).toEqual([f.properties.LONGITUD, f.properties.LATITUDE]);

    const rows: Record<string, string>[] = [];
    next = url('export/crashes', { geometry: CHICAGO, format: 'csv', limit: 400 });
    while (next) {
      const res = await t.request('GET', next);
      expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8; header=present');
      rows.push(...csvRows(res.body as string));
      next = nextOf(res.headers.get('link'));
    }
    expect(rows).toEqual(fars.records.map((r: Record_) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, asCsv(v)]))));
  });

  it('all of California walks through its next links: the area travels as a token, so every link stays short enough for common clients', async () => {
    // The outline itself would not fit in a link under the 10 KiB bound checked below.
    expect(new URLSearchParams({ geometry: CALIFORNIA }).toString().length).toBeGreaterThan(10 * 1024);
    const total = (await get('farsInfo', { geometry: CALIFORNIA, limit: 0 })).body.farsInfo.total as number;
    expect(total).toBeGreaterThan(8000);
    const cases = new Set<string>();
    let next: string | null = url('export/crashes', { geometry: CALIFORNIA, format: 'csv', limit: 5000 });
    let pages = 0;
    while (next) {
      const res = await t.request('GET', next);
      expect(res.status).toBe(200);
      for (const r of csvRows(res.body as string)) cases.add(`${r.YEAR}-${r.ST_CASE}`);
      const link = res.headers.get('link');
      if (link) expect(link.length).toBeLessThan(10 * 1024);
      next = nextOf(link);
      pages += 1;
    }
    expect(pages).toBe(2);
    expect(cases.size).toBe(total);
    // farsInfo's own Link carries the token too.
    const fars = await get('farsInfo', { geometry: CALIFORNIA, limit: 1000 });
    const farsNext = nextOf(fars.headers.get('link'))!;
    expect(farsNext.length).toBeLessThan(10 * 1024);
    expect(new URL(farsNext, t.url).searchParams.get('limit')).toBe('1000');
    const second = await t.request('GET', farsNext);
    expect(second.body.area).toEqual(fars.body.area);
    expect(second.body.farsInfo.records[0]).not.toEqual(fars.body.farsInfo.records[0]);
  });

  it('outside coverage: an empty FeatureCollection, a CSV with its header only', async () => {
    const geojson = await get('export/crashes', { geometry: LAS_VEGAS, radius: 0.1 });
    expect(geojson.status).toBe(200);
    expect(geojson.body).toEqual({ type: 'FeatureCollection', numberMatched: 0, numberReturned: 0, links: [], filter: null, features: [] });
    const csv = await get('export/cells', { geometry: LAS_VEGAS, radius: 0.1, format: 'csv' });
    expect(csv.body).toBe('cell,resolution,riskIndex,latitude,longitude,fatal,injury,propertyDamageOnly,fatalities,areaKm2,fatalCrashesPerKm2Year,fatalitiesPerKm2Year,wkt\r\n');
  });

  it('refuses a format, page size or cursor it does not know with 400 problem+json', async () => {
    for (const [path, params, name] of [
      ['export/cells', { geometry: CHICAGO, format: 'kml' }, 'format'],
      ['export/crashes', { geometry: CHICAGO, limit: 5001 }, 'first'],
      ['export/cells', { geometry: CHICAGO, limit: 0 }, 'first'],
      ['export/crashes', { geometry: CHICAGO, after: 'not-a-cursor!' }, 'after'],
      ['export/cells', { geometry: CHICAGO, after: Buffer.from('[2015,1,1,1,1,"x"]').toString('base64url') }, 'after'],
      ['farsInfo', { geometry: CHICAGO, limit: 1001 }, 'limit'],
      ['farsInfo', { area: 'bm90LWRlZmxhdGVk' }, 'area'],
      // Only the paged paths take the token; the others want the geometry.
      ['riskInfo', { area: encodeRiskArea({ wkt: CHICAGO }) }, 'geometry'],
      ['export/cells', { area: 'q1YKCPIP8fd3UdJRMjIwUNAw0DE0MdRUitWJBgA', geometry: CHICAGO }, 'area'],
      ['farsInfo', { geometry: CHICAGO, after: Buffer.from('["872664500ffffff"]').toString('base64url') }, 'after'],
    ] as const) {
      const res = await get(path, params);
      expect(res.status, `${path} ${JSON.stringify(params)}`).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(JSON.stringify(res.body)).toContain(name);
    }
  });
});

describe('farsInfo paging', () => {
  it('walks every fatal crash of the Los Angeles metro (more than one 1,000-record page) with no duplicate and no gap, most recent first (REST, Link header)', async () => {
    const first = await get('farsInfo', { geometry: LA_METRO, limit: 1000 });
    const total = first.body.farsInfo.total as number;
    expect(total).toBeGreaterThan(2000);
    const records: Record_[] = [...first.body.farsInfo.records];
    expect(first.body.farsInfo.pageInfo.hasNextPage).toBe(true);
    let next = nextOf(first.headers.get('link'));
    while (next) {
      const res = await t.request('GET', next);
      expect(res.status).toBe(200);
      expect(res.body.farsInfo.total).toBe(total);
      records.push(...res.body.farsInfo.records);
      next = nextOf(res.headers.get('link'));
      expect(!!next).toBe(res.body.farsInfo.pageInfo.hasNextPage);
    }
    expect(records).toHaveLength(total);
    expect(new Set(records.map((r) => `${r.YEAR}-${r.ST_CASE}`)).size).toBe(total);
    const key = (r: Record_) => `${r.YEAR}-${String(r.MONTH).padStart(2, '0')}-${String(r.DAY).padStart(2, '0')} ${String(r.HOUR).padStart(2, '0')}`;
    for (let i = 1; i < records.length; i++) expect(key(records[i - 1]) >= key(records[i])).toBe(true);
    expect(records.reduce((s, r) => s + Number(r.FATALS), 0)).toBe(first.body.farsInfo.fatalities);
  });

  it('GraphQL: first/after and pageInfo give the same records as the REST walk; first=0 says whether any record exists', async () => {
    const query = `query($wkt: WKT!, $first: Int, $after: String) { riskIndex(wkt: $wkt) { farsInfo(first: $first, after: $after) {
      total returned records { ST_CASE YEAR } pageInfo { hasNextPage endCursor } } } }`;
    const seen: string[] = [];
    type Page = { total: number; returned: number; records: Record_[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };
    let after: string | null = null;
    let total: number;
    for (;;) {
      const r: { data?: { riskIndex: { farsInfo: Page } }; errors?: unknown } = await t.graphql(query, { wkt: CHICAGO, first: 300, after }, null);
      expect(r.errors).toBeUndefined();
      const page = r.data!.riskIndex.farsInfo;
      total = page.total;
      expect(page.returned).toBe(page.records.length);
      seen.push(...page.records.map((x: Record_) => `${x.YEAR}-${x.ST_CASE}`));
      if (!page.pageInfo.hasNextPage) break;
      after = page.pageInfo.endCursor;
    }
    const rest = (await get('farsInfo', { geometry: CHICAGO, limit: 1000 })).body.farsInfo.records.map((x: Record_) => `${x.YEAR}-${x.ST_CASE}`);
    expect(seen).toEqual(rest);
    expect(seen).toHaveLength(total);
    const none = await t.graphql(query, { wkt: CHICAGO, first: 0 }, null);
    expect(none.data.riskIndex.farsInfo).toMatchObject({ returned: 0, records: [], pageInfo: { hasNextPage: true, endCursor: null } });
  });
});

describe('GraphQL exports', () => {
  it('riskIndex.exports links the REST exports of the area, and exportPage gives the same text', async () => {
    const r = await t.graphql(`query($wkt: WKT!, $radius: Float) { riskIndex(wkt: $wkt, radius: $radius) {
      exports { cellsGeoJson cellsCsv crashesGeoJson crashesCsv }
      exportPage(data: CRASHES, format: CSV, first: 10) { mediaType filename content total pageInfo { hasNextPage endCursor } nextUrl } } }`,
    { wkt: 'POINT(-87.6298 41.8781)', radius: 0.02 }, null);
    expect(r.errors).toBeUndefined();
    const { exports, exportPage } = r.data.riskIndex;
    for (const [field, path, type] of [['cellsGeoJson', 'cells', 'application/geo+json'], ['cellsCsv', 'cells', 'text/csv'], ['crashesGeoJson', 'crashes', 'application/geo+json'], ['crashesCsv', 'crashes', 'text/csv']]) {
      expect(exports[field]).toMatch(new RegExp(`^${BASE}/export/${path}\\?geometry=`));
      const res = await t.request('GET', exports[field]);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain(type);
    }
    const csv = await t.request('GET', `${exports.crashesCsv}&limit=10`);
    expect(exportPage).toMatchObject({ mediaType: 'text/csv; charset=utf-8; header=present', filename: 'risk-index-crashes.csv', content: csv.body });
    expect(exportPage.total).toBeGreaterThan(10);
    expect(exportPage.pageInfo.hasNextPage).toBe(true);
    expect(exportPage.nextUrl).toBe(nextOf(csv.headers.get('link')));
    expect(exportPage.nextUrl).toContain(`after=${exportPage.pageInfo.endCursor}`);
  });
});
