/**
 * OGC API - Features at /riskIndex/v1/ogc through GDAL's OAPIF driver (Debian's gdal-bin, installed by
 * .ci/run) against a stack on loopback, and over HTTP for what GDAL cannot send (datetime, hostile input).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { getIssues } from '@placemarkio/check-geojson';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cellToCenterChild, cellToParent, getResolution } from 'h3-js';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { cellsOverlapping } from '../../subgraphs/risk/geometry/cells.ts';
import { clipToCoverage } from '../../subgraphs/risk/geometry/coverage.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const run = promisify(execFile);
const OGC = '/riskIndex/v1/ogc';
// Chicago's west side: several hundred crashes, several pages at a small limit.
const BBOX = [-87.95, 41.7, -87.68, 42.0] as const;
const BOX_WKT = `POLYGON((${BBOX[0]} ${BBOX[1]}, ${BBOX[2]} ${BBOX[1]}, ${BBOX[2]} ${BBOX[3]}, ${BBOX[0]} ${BBOX[3]}, ${BBOX[0]} ${BBOX[1]}))`;

interface Feature { id: string; geometry: { coordinates: [number, number] }; properties: Record<string, unknown> }
interface Page { type: string; numberReturned: number; numberMatched?: number; timeStamp: string; links: { rel: string; href: string }[]; features: Feature[] }

let t: TestStack;
let dir: string;
const get = async (path: string) => {
  const res = await fetch(`${t.url}${path}`);
  return { status: res.status, type: res.headers.get('content-type'), body: await res.json() as Record<string, unknown> };
};
const inBox = (f: Feature) => {
  const [lon, lat] = f.geometry.coordinates;
  return lon >= BBOX[0] && lon <= BBOX[2] && lat >= BBOX[1] && lat <= BBOX[3];
};

/** Every page of the REST crash export of the box, its crashes inside the box. */
async function restCrashes(filter: Record<string, string> = {}): Promise<Feature[]> {
  const all: Feature[] = [];
  let next: string | null = `/riskIndex/v1/export/crashes?${new URLSearchParams({ geometry: BOX_WKT, limit: '1000', ...filter })}`;
  while (next) {
    const res = await fetch(`${t.url}${next}`);
    expect(res.status).toBe(200);
    all.push(...(await res.json() as Page).features);
    next = res.headers.get('link')?.match(/^<([^>]+)>; rel="next"$/)?.[1] ?? null;
  }
  return all.filter(inBox);
}

/** Every page of an items query over HTTP, following the next links. */
async function walk(path: string): Promise<{ features: Feature[]; pages: number }> {
  const features: Feature[] = [];
  let next: string | null = `${t.url}${path}`, pages = 0;
  while (next) {
    const res = await fetch(next);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/geo+json');
    const text = await res.text();
    expect(getIssues(text)).toEqual([]);
    const page = JSON.parse(text) as Page;
    expect(page.numberReturned).toBe(page.features.length);
    features.push(...page.features);
    pages++;
    next = page.links.find((l) => l.rel === 'next')?.href ?? null;
  }
  return { features, pages };
}

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['risk'] });
  await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
  dir = await mkdtemp(join(tmpdir(), 'ogc-'));
}, 600_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t?.close();
});

describe('OGC API - Features through GDAL', () => {
  it('ogrinfo lists the crashes and cells collections', async () => {
    const { stdout } = await run('ogrinfo', ['-ro', '-q', `OAPIF:${t.url}${OGC}`]);
    expect(stdout).toMatch(/crashes/);
    expect(stdout).toMatch(/cells/);
  });

  it('ogr2ogr pulls the crashes of a bbox page by page: as many as the REST export holds in it', async () => {
    const out = join(dir, 'crashes.json');
    await run('ogr2ogr', ['-f', 'GeoJSON', out, `OAPIF:${t.url}${OGC}`, 'crashes', '-oo', 'PAGE_SIZE=100', '-spat', ...BBOX.map(String)], { maxBuffer: 1 << 26 });
    const pulled = JSON.parse(await readFile(out, 'utf8')) as { features: Feature[] };
    const rest = await restCrashes();
    expect(rest.length).toBeGreaterThan(100);
    expect(pulled.features).toHaveLength(rest.length);
    expect(new Set(pulled.features.map((f) => f.properties.ST_CASE + '-' + f.properties.YEAR)))
      .toEqual(new Set(rest.map((f) => f.properties.ST_CASE + '-' + f.properties.YEAR)));
    // And over HTTP: the same crashes, in more than one page.
    const http = await walk(`${OGC}/collections/crashes/items?bbox=${BBOX.join(',')}&limit=100`);
    expect(http.pages).toBeGreaterThan(2);
    expect(http.features).toHaveLength(rest.length);
  }, 120_000);
});

describe('OGC API - Features over HTTP', () => {
  it('landing page, conformance, collections and a valid OpenAPI 3.0 service-desc', async () => {
    const landing = await get(OGC);
    expect(landing.status).toBe(200);
    const rels = (landing.body.links as { rel: string; href: string }[]).map((l) => l.rel);
    expect(rels).toEqual(expect.arrayContaining(['self', 'service-desc', 'conformance', 'data']));
    const conformance = await get(`${OGC}/conformance?f=json`);
    expect(conformance.body.conformsTo).toEqual(expect.arrayContaining(['core', 'geojson', 'oas30']
      .map((c) => `http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/${c}`)));
    const collections = await get(`${OGC}/collections`);
    expect((collections.body.collections as { id: string }[]).map((c) => c.id)).toEqual(['crashes', 'cells']);
    expect((await get(`${OGC}/collections/cells`)).body.id).toBe('cells');
    const api = await get(`${OGC}/api`);
    expect(api.type).toBe('application/vnd.oai.openapi+json;version=3.0');
    expect(api.body.openapi).toMatch(/^3\.0\./);
    expect((await new Validator().validate(api.body)).valid).toBe(true);
    const main = await get('/openapi.json');
    expect(Object.keys(main.body.paths as object).filter((p) => p.includes('/ogc'))).toEqual([]);
  });

  it('items: timeStamp, counts, and one feature by its id; cells as polygons with their figures', async () => {
    const page = (await get(`${OGC}/collections/crashes/items?bbox=${BBOX.join(',')}&limit=5&f=json`)).body as unknown as Page;
    expect(page).toMatchObject({ type: 'FeatureCollection', numberReturned: 5 });
    expect(Date.parse(page.timeStamp)).not.toBeNaN();
    const one = await get(`${OGC}/collections/crashes/items/${encodeURIComponent(page.features[0].id)}`);
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: page.features[0].id, properties: { ST_CASE: page.features[0].properties.ST_CASE } });
    const cells = (await get(`${OGC}/collections/cells/items?bbox=${BBOX.join(',')}&limit=10`)).body as unknown as Page & { features: { geometry: { type: string } }[] };
    expect(cells.numberReturned).toBe(10);
    expect(cells.numberMatched).toBeGreaterThan(10);
    expect(cells.features[0].geometry.type).toBe('Polygon');
    expect(cells.features[0].properties).toHaveProperty('riskIndex');
    expect(cells.features.every((f) => getResolution(f.id) === 7)).toBe(true);
    // One cell by its id: a resolution-7 cell; its parent (5) and a child (9) are no features of the collection.
    const cell = await get(`${OGC}/collections/cells/items/${cells.features[0].id}`);
    expect(cell.status).toBe(200);
    expect(cell.body).toMatchObject({ id: cells.features[0].id, properties: { resolution: 7 } });
    expect(getResolution(cell.body.id as string)).toBe(7);
    for (const other of [cellToParent(cells.features[0].id, 5), cellToCenterChild(cells.features[0].id, 9)]) {
      expect((await get(`${OGC}/collections/cells/items/${other}`)).status).toBe(404);
    }
  });

  it('cells of a large bbox: resolution 7 however large, in tiles within the cell budget, every cell of the bbox once', async () => {
    // Around Los Angeles: 3 x 3 degrees, past one tile of 1.5 degrees, some 20,000 cells (over RISK_MAX_CELLS in one piece).
    const big = [-119.5, 33, -116.5, 36] as const;
    const { features, pages } = await walk(`${OGC}/collections/cells/items?bbox=${big.join(',')}&limit=5000`);
    expect(pages).toBeGreaterThan(2);
    expect(features.every((f) => getResolution(f.id) === 7)).toBe(true);
    const ids = features.map((f) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    // The same cells as the whole box clipped to the state and covered at 7 in one go (what one request would give).
    const box = { type: 'Feature', properties: {}, geometry: { type: 'Polygon', coordinates: [[[big[0], big[1]], [big[2], big[1]], [big[2], big[3]], [big[0], big[3]], [big[0], big[1]]]] } } as const;
    const expected = cellsOverlapping(clipToCoverage(box as never).parts.map((p) => p.area), 7);
    expect(expected.length).toBeGreaterThan(10_000);
    expect(ids.sort()).toEqual(expected.sort());
    // Through GDAL, as a QGIS layer zoomed out to the region: the same cells.
    const out = join(dir, 'cells.json');
    await run('ogr2ogr', ['-f', 'GeoJSON', out, `OAPIF:${t.url}${OGC}`, 'cells', '-oo', 'PAGE_SIZE=10000', '-spat', ...big.map(String)], { maxBuffer: 1 << 27 });
    const pulled = JSON.parse(await readFile(out, 'utf8')) as { features: { properties: { cell: string } }[] };
    expect(pulled.features.map((f) => f.properties.cell).sort()).toEqual(expected);
    // The whole coverage (no bbox, or the world): a first page of resolution-7 cells and a next link, not a refusal.
    for (const query of ['limit=10000', 'bbox=-180,-90,180,90&limit=10000']) {
      const first = await get(`${OGC}/collections/cells/items?${query}`);
      expect(first.status, query).toBe(200);
      const page = first.body as unknown as Page;
      expect(page.features.length).toBeGreaterThan(0);
      expect(page.features.every((f) => getResolution(f.id) === 7)).toBe(true);
      expect(page.links.some((l) => l.rel === 'next')).toBe(true);
      expect(page.numberMatched).toBeUndefined();
    }
    expect((await get(`${OGC}/collections/cells/items?bbox=${big.join(',')}&cursor=junk`)).body).toMatchObject({ code: 'InvalidParameterValue' });
  }, 240_000);

  it('datetime: a year as an interval, a date, and open ends keep the crashes of that local time only', async () => {
    const rest = await restCrashes();
    const of2015 = rest.filter((f) => f.properties.YEAR === 2015);
    expect(of2015.length).toBeGreaterThan(5);
    const year = await walk(`${OGC}/collections/crashes/items?bbox=${BBOX.join(',')}&limit=20&datetime=2015-01-01/2015-12-31`);
    expect(year.features.map((f) => f.properties.localDateTime).sort()).toEqual(of2015.map((f) => f.properties.localDateTime).sort());
    const day = String(of2015[0].properties.localDateTime).slice(0, 10);
    const onDay = await walk(`${OGC}/collections/crashes/items?bbox=${BBOX.join(',')}&datetime=${day}`);
    expect(onDay.features.length).toBe(rest.filter((f) => String(f.properties.localDateTime).startsWith(day)).length);
    const since = await walk(`${OGC}/collections/crashes/items?bbox=${BBOX.join(',')}&limit=1000&datetime=2015-01-01T00:00:00Z/..`);
    expect(since.features.length).toBe(rest.filter((f) => Number(f.properties.YEAR) >= 2015).length);
    const until = await walk(`${OGC}/collections/crashes/items?bbox=${BBOX.join(',')}&limit=1000&datetime=../2014-12-31`);
    expect(until.features.length).toBe(rest.filter((f) => Number(f.properties.YEAR) <= 2014).length);
  }, 120_000);

  it('the crash filter of the Risk Index: the same crashes as the REST export under it; cells under it too', async () => {
    const filter = { hours: '0,1,2,3,4,5', pedestrians: 'true' };
    const rest = await restCrashes(filter);
    expect(rest.length).toBeGreaterThan(3);
    const ogc = await walk(`${OGC}/collections/crashes/items?bbox=${BBOX.join(',')}&limit=7&${new URLSearchParams(filter)}`);
    expect(ogc.features.map((f) => f.id.split('_')[0]).sort()).toEqual(rest.map((f) => `${f.properties.YEAR}-${f.properties.ST_CASE}`).sort());
    const query = `bbox=${BBOX.join(',')}&limit=10000`;
    const fatal = (page: Page) => page.features.reduce((n, f) => n + Number(f.properties.fatal), 0);
    const all = (await get(`${OGC}/collections/cells/items?${query}`)).body as unknown as Page;
    const filtered = (await get(`${OGC}/collections/cells/items?${query}&${new URLSearchParams(filter)}`)).body as unknown as Page;
    expect(fatal(filtered)).toBeGreaterThan(0);
    expect(fatal(filtered)).toBeLessThan(fatal(all));
    const bad = await get(`${OGC}/collections/crashes/items?hours=25`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'InvalidParameterValue', description: expect.stringMatching(/hours/) });
  }, 120_000);

  it('hostile input: 400 OGC exceptions before any work, 404 for an unknown collection or feature', async () => {
    const items = `${OGC}/collections/crashes/items`;
    for (const query of ['limit=1e9', 'limit=10001', 'limit=abc', 'limit=0', 'bbox=1,2,3', 'bbox=a,b,c,d', 'bbox=-200,0,0,10',
      'bbox=170,0,-170,10', 'datetime=../..', 'datetime=2015-13-01', 'datetime=2016-01-01/2015-01-01', 'f=xml']) {
      const res = await get(`${items}?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body).toMatchObject({ code: 'InvalidParameterValue', description: expect.any(String) });
    }
    expect((await get(`${items}?bbox=170,0,-170,10`)).body.description).toMatch(/antimeridian/);
    expect((await get(`${OGC}/collections/cells/items?datetime=2015-01-01`)).status).toBe(400);
    // The whole world at the largest limit: the search area budget answers, as an OGC exception, or a bounded page.
    const world = await get(`${items}?bbox=-180,-90,180,90&limit=10000`);
    expect([200, 422]).toContain(world.status);
    if (world.status === 422) expect(world.body).toMatchObject({ code: 'InvalidParameterValue', description: expect.any(String) });
    else expect((world.body.features as unknown[]).length).toBeLessThanOrEqual(10_000);
    for (const path of [`${OGC}/collections/nope`, `${OGC}/collections/nope/items`, `${items}/2015-1_0_0`, `${items}/junk`]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.body).toMatchObject({ code: 'NotFound' });
    }
  });
});
