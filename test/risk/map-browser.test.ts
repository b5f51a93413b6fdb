/**
 * The Risk Index map (GET /riskIndex/v1/map, and the GraphQL `map` field) and the interactive map
 * (GET /riskIndex/v1/map/view) rendered in a real headless Chromium (test/support/browser.ts).
 * Screenshots go to artifacts/ (git-ignored); those of the Loop and Los Angeles County to the
 * test's temporary folder too (docs/img/ holds a copy of them, taken once).
 */
import { mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { geojsonToWKT } from '@terraformer/wkt';
import type { FeatureCollection } from 'geojson';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { areaPoolFor } from '../../subgraphs/risk/geometry/pool.ts';
import { coveredCounties } from '../../subgraphs/risk/map/reference.ts';
import { launchBrowser } from '../support/browser.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const ARTIFACTS = new URL('../../artifacts/', import.meta.url).pathname;
const LOOP = { geometry: 'POINT(-87.6298 41.8781)', radius: '0.02' };
const LA_COUNTY = { geometry: geojsonToWKT(coveredCounties().find((c) => c.fips === '06037')!.feature.geometry) };
const mapPath = (params: Record<string, string>) => `/riskIndex/v1/map?${new URLSearchParams(params)}`;
const viewPath = (params: Record<string, string>) => `/riskIndex/v1/map/view?${new URLSearchParams(params)}`;
const layersPath = (params: Record<string, string>) => `/riskIndex/v1/map/layers?${new URLSearchParams(params)}`;
/** The PNGs of the closing note, under the test's own temporary folder. */
const PICTURES = mkdtempSync(join(tmpdir(), 'risk-map-png-'));

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

  it('draws county boundaries and names the major places of Los Angeles County, under and over its cells', async () => {
    const res = await t.request('GET', mapPath(LA_COUNTY));
    expect(res.status).toBe(200);
    const svg = res.body as string;
    expect(svg.match(/class="county"/g)!.length).toBeGreaterThan(3);
    expect(svg).toContain('<title>Los Angeles County, CA</title>');
    for (const name of ['Los Angeles', 'Long Beach', 'Pasadena']) expect(svg).toContain(`>${name}</text></g>`);
    expect(svg.indexOf('<g id="counties"')).toBeLessThan(svg.indexOf('<g id="cells"'));
    expect(svg.indexOf('<g id="places"')).toBeGreaterThan(svg.indexOf('<g id="cells"'));
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

/** What a PNG shows, decoded by the browser: distinct colours, and the share of pixels unlike the commonest colour. */
async function pictureStats(page: Page, png: Buffer): Promise<{ colours: number; varied: number }> {
  await page.goto('about:blank');
  return page.evaluate<{ colours: number; varied: number }>(`(async () => {
    const image = new Image();
    image.src = 'data:image/png;base64,${png.toString('base64')}';
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = image.width;
    canvas.height = image.height;
    const context = canvas.getContext('2d');
    context.drawImage(image, 0, 0);
    const pixels = context.getImageData(0, 0, image.width, image.height).data;
    const counts = new Map();
    for (let i = 0; i < pixels.length; i += 4) {
      const key = (pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2];
      counts.set(key, (counts.get(key) || 0) + 1);
    }
    return { colours: counts.size, varied: 1 - Math.max(...counts.values()) / (pixels.length / 4) };
  })()`);
}

/** Saves a screenshot under the test's temporary folder and checks it shows a map, not a blank page. */
async function savePicture(page: Page, name: string) {
  const path = join(PICTURES, name);
  const png = await page.screenshot({ path });
  expect(statSync(path).size).toBeGreaterThan(20_000);
  const stats = await pictureStats(page, png);
  expect(stats.colours).toBeGreaterThan(50);
  expect(stats.varied).toBeGreaterThan(0.2);
}

/** A page that records console errors, CSP violations and every URL it asks for. */
async function watchedPage(viewport = { width: 1000, height: 760 }) {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  const requested: string[] = [];
  page.on('console', (message) => { if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) errors.push(message.text()); });
  page.on('pageerror', (error) => { errors.push(error.message); });
  page.on('request', (request) => { requested.push(request.url()); });
  await page.exposeFunction('reportCspViolation', (violation: string) => { errors.push(`CSP: ${violation}`); });
  await page.addInitScript(`document.addEventListener('securitypolicyviolation', (e) => window.reportCspViolation(e.violatedDirective + ' ' + (e.blockedURI || 'inline')));`);
  return { page, errors, requested };
}

describe('GET /riskIndex/v1/map/layers', () => {
  it('answers the interactive map\'s layers as GeoJSON, one feature per cell with its figures', async () => {
    const res = await t.request('GET', layersPath(LOOP));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/geo\+json/);
    const layers = (typeof res.body === 'string' ? JSON.parse(res.body) : res.body) as FeatureCollection;
    const info = await t.request('GET', `/riskIndex/v1/riskInfo?${new URLSearchParams(LOOP)}`);
    const cells = layers.features.filter((f) => f.properties!.layer === 'cell');
    expect(cells).toHaveLength(info.body.area.cellsTouched);
    // Cells hold every crash in them (accidentSummary's count); riskInfo counts those inside the exact outline.
    const summary = await t.request('GET', `/riskIndex/v1/accidentSummary?${new URLSearchParams(LOOP)}`);
    const inCells = cells.reduce((sum, f) => sum + (f.properties!.fatalCrashes as number), 0);
    expect(inCells).toBe(summary.body.accidentSummary.fatal);
    expect(inCells).toBeGreaterThanOrEqual(info.body.riskInfo.fatalCrashes);
    const riskiest = info.body.riskInfo.riskiestCells[0];
    expect(cells.find((f) => f.properties!.h3 === riskiest.cell)!.properties).toMatchObject({ index: riskiest.riskIndex, fatalities: riskiest.fatalities });
    expect(layers.features.filter((f) => f.properties!.layer === 'county').map((f) => f.properties!.name)).toContain('Cook');
    const gql = await t.graphql('query($w: WKT!, $r: Float) { riskIndex(wkt: $w, radius: $r) { mapLayers } }', { w: LOOP.geometry, r: Number(LOOP.radius) }, null);
    expect(JSON.parse(gql.data.riskIndex.mapLayers)).toEqual(layers);
  });
});

describe('GET /riskIndex/v1/map/view (Leaflet, served from node_modules)', () => {
  it('loads with no console error and no CSP violation, from this origin only, and shows a cell\'s figures on hover', async () => {
    const res = await t.request('GET', viewPath(LOOP));
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    const { page, errors, requested } = await watchedPage();
    await page.goto(`${t.url}${viewPath(LOOP)}`);
    await page.locator('body[data-ready="true"]').waitFor();
    const cells = page.locator('path[data-cell]');
    const info = await t.request('GET', `/riskIndex/v1/riskInfo?${new URLSearchParams(LOOP)}`);
    expect(await cells.count()).toBe(info.body.area.cellsTouched);
    expect(await page.locator('.place-label').allTextContents()).toEqual(expect.arrayContaining(['Chicago']));
    // The riskiest cell, hovered where nothing lies over it.
    const riskiest = info.body.riskInfo.riskiestCells[0];
    const box = (await page.locator(`path[data-cell="${riskiest.cell}"]`).boundingBox())!;
    const point = await page.evaluate<{ x: number; y: number } | null>(`(() => {
      const b = ${JSON.stringify(box)};
      for (let fx = 0.3; fx <= 0.71; fx += 0.1) for (let fy = 0.3; fy <= 0.71; fy += 0.1) {
        const x = b.x + b.width * fx, y = b.y + b.height * fy;
        if (document.elementFromPoint(x, y)?.getAttribute('data-cell') === ${JSON.stringify(riskiest.cell)}) return { x, y };
      }
      return null;
    })()`);
    expect(point).not.toBeNull();
    await page.mouse.move(point!.x, point!.y);
    const shown = await page.locator('#info').textContent();
    expect(shown).toContain(riskiest.cell);
    expect(shown).toContain(`${riskiest.fatal} fatal crashes, ${riskiest.fatalities} killed`);
    expect(shown).toMatch(/Index [\d.]+ \/ 100/);
    // Zoom: the + control doubles the scale.
    const before = await page.locator('.leaflet-control-scale-line').textContent();
    await page.locator('.leaflet-control-zoom-in').click();
    await expect.poll(() => page.locator('.leaflet-control-scale-line').textContent()).not.toBe(before);
    expect(errors).toEqual([]);
    expect(requested.filter((url) => !url.startsWith(t.url))).toEqual([]);
    await page.close();
  });

  it('says what is wrong when the area is invalid', async () => {
    const { page } = await watchedPage();
    await page.goto(`${t.url}${viewPath({ geometry: 'POINT(-87.6 141.8)' })}`);
    await expect.poll(() => page.locator('#status').textContent()).toMatch(/^400: .*latitude 141.8 is out of range/);
    await page.close();
  });

  it('saves PNGs of the Chicago Loop and Los Angeles County maps, SVG and interactive, that show a map', async () => {
    const { page, errors } = await watchedPage({ width: 800, height: 640 });
    for (const [name, area] of [['chicago-loop', LOOP], ['los-angeles-county', LA_COUNTY]] as const) {
      await page.goto(`${t.url}${mapPath(area)}`);
      await savePicture(page, `risk-map-${name}.png`);
      await page.setViewportSize({ width: 1000, height: 760 });
      await page.goto(`${t.url}${viewPath(area)}`);
      await page.locator('body[data-ready="true"]').waitFor();
      // The labels left visible do not overlap (a smaller place's yields).
      const boxes = await page.evaluate<{ left: number; right: number; top: number; bottom: number }[]>(`[...document.querySelectorAll('.place-label')]
        .filter((el) => el.style.visibility !== 'hidden').map((el) => el.getBoundingClientRect().toJSON())`);
      expect(boxes.length).toBeGreaterThan(0);
      for (const [i, a] of boxes.entries()) {
        for (const b of boxes.slice(i + 1)) expect(a.right < b.left || a.left > b.right || a.bottom < b.top || a.top > b.bottom).toBe(true);
      }
      await savePicture(page, `risk-map-view-${name}.png`);
      await page.setViewportSize({ width: 800, height: 640 });
    }
    expect(errors).toEqual([]);
    console.log(`Risk Index map pictures: ${PICTURES}`);
    await page.close();
  });
});
