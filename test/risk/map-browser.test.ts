/**
 * The Risk Index map (GET /riskIndex/v1/map, and the GraphQL `map` field) rendered in a real headless
 * Chromium (test/support/browser.ts). Screenshots go to artifacts/ (git-ignored).
 */
import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riskDataLoaded } from '../../subgraphs/risk/data/load.ts';
import { areaPoolFor } from '../../subgraphs/risk/geometry/pool.ts';
import { launchBrowser } from '../support/browser.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const ARTIFACTS = new URL('../../artifacts/', import.meta.url).pathname;
const LOOP = { geometry: 'POINT(-87.6298 41.8781)', radius: '0.02' };
const mapPath = (params: Record<string, string>) => `/riskIndex/v1/map?${new URLSearchParams(params)}`;

let t: TestStack;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  t = await startTestStack({ subgraphs: ['risk'] });
  await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
  browser = await launchBrowser();
}, 600_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe('GET /riskIndex/v1/map', () => {
  it('answers an SVG document with cells, crashes, legend, scale and source, the same as the GraphQL field', async () => {
    const res = await t.request('GET', mapPath(LOOP));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    const svg = res.body as string;
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    const cells = await t.request('GET', `/riskIndex/v1/accidentSummary?${new URLSearchParams(LOOP)}`);
    expect(svg.match(/class="cell"/g)).toHaveLength(cells.body.area.cellsTouched);
    const crashes = svg.slice(svg.indexOf('<g id="crashes"'), svg.indexOf('</g>', svg.indexOf('<g id="crashes"')));
    // The crashes of the cells drawn (the index counts those inside the exact area).
    expect(crashes.match(/<circle /g)?.length).toBe(cells.body.accidentSummary.total);
    expect(svg).toContain('id="legend"');
    expect(svg).toContain('id="scale"');
    expect(svg).toContain('NHTSA Fatality Analysis Reporting System (FARS), 2013-2015');
    expect(svg).toContain('data-state="IL"');
    const gql = await t.graphql('query($w: WKT!, $r: Float) { riskIndex(wkt: $w, radius: $r) { map } }', { w: LOOP.geometry, r: Number(LOOP.radius) }, null);
    expect(gql.data.riskIndex.map).toBe(svg);
  });

  it('is drawn in a worker thread of the Risk Index pool, not on the event loop', async () => {
    const pool = areaPoolFor(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
    pool.forgetAreas();
    const before = pool.stats();
    const res = await t.request('GET', mapPath({ geometry: 'POLYGON((-118.95 33.7, -117.65 33.7, -117.65 34.82, -118.95 34.82, -118.95 33.7))' }));
    expect(res.status).toBe(200);
    expect(res.body).toContain('class="cell"');
    const after = pool.stats();
    // One task resolved the area and one drew it; the drawing thread is a worker (thread 0 is the main thread).
    expect(after.areas).toBe(before.areas + 1);
    expect(after.maps).toBe(before.maps + 1);
    expect(after.mapThreads.length).toBeGreaterThan(0);
    expect(after.mapThreads).not.toContain(0);
  });

  it('validates like every Risk Index method (400 problem+json) and says when the area is outside coverage', async () => {
    const bad = await t.request('GET', mapPath({ geometry: 'POINT(-87.6 141.8)' }));
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(bad.body.detail).toMatch(/latitude 141.8 is out of range/);
    expect((await t.request('GET', mapPath({ geometry: LOOP.geometry, radius: '50' }))).status).toBe(400);
    const outside = await t.request('GET', mapPath({ geometry: 'POINT(-115.14 36.17)', radius: '0.1' }));
    expect(outside.status).toBe(200);
    expect(outside.body).toContain('Outside coverage');
    expect(outside.body).not.toContain('class="cell"');
  });

  it('renders in Chromium with coloured cells and a legend', async () => {
    const page = await browser.newPage({ viewport: { width: 800, height: 640 } });
    await page.goto(`${t.url}${mapPath(LOOP)}`, { waitUntil: 'load' });
    const svg = page.locator('svg').first();
    await expect.poll(() => svg.count()).toBe(1);
    // Cells with a fatal crash are drawn in an index colour, and have a size on screen.
    const coloured = page.locator('path.cell:not([fill="#eeeeee"])');
    expect(await coloured.count()).toBeGreaterThan(5);
    const box = await coloured.first().boundingBox();
    expect(box!.width).toBeGreaterThan(5);
    expect(await page.locator('#legend .legend-swatch').count()).toBe(6);
    expect(await page.locator('#legend').textContent()).toMatch(/80-100/);
    const legendBox = await page.locator('#legend').boundingBox();
    expect(legendBox!.y + legendBox!.height).toBeLessThanOrEqual(640);
    await page.screenshot({ path: `${ARTIFACTS}risk-map-chicago-loop.png` });
    await page.close();
  });
});
