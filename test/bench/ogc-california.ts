/**
 * Every California crash through the OGC API (`npm run bench:ogc`): the wall time of GDAL's `ogr2ogr`
 * pulling the crashes of California's bounding box (every year; GDAL 3.6 cannot send datetime), and of
 * paging `datetime=2015-01-01/2015-12-31` over HTTP (first, cold), on the embedded default started as `npm start` would.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startChildServer } from '../support/child-server.ts';

const run = promisify(execFile);
const CALIFORNIA = [-124.5, 32.5, -114.1, 42.0];
const OGC = '/riskIndex/v1/ogc';

interface Page { features: { properties: { STATE: unknown; YEAR: number } }[]; links: { rel: string; href: string }[] }
const californian = (f: Page['features'][number]) => f.properties.STATE === 6 || f.properties.STATE === 'California';

const server = await startChildServer({ NODE_ENV: 'production', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000000' });
const dir = await mkdtemp(join(tmpdir(), 'ogc-bench-'));
try {
  for (let i = 0; i < 600 && (await fetch(`${server.base}/readyz`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 500));
  // First, while the area is cold (its cells are evaluated once, then cached); then GDAL, warm.
  let started = performance.now();
  let next: string | null = `${server.base}${OGC}/collections/crashes/items?bbox=${CALIFORNIA.join(',')}&limit=10000&datetime=2015-01-01/2015-12-31`;
  let pages = 0, of2015 = 0, californian2015 = 0;
  while (next) {
    const res = await fetch(next);
    if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
    const page = await res.json() as Page;
    pages++;
    of2015 += page.features.length;
    californian2015 += page.features.filter(californian).length;
    next = page.links.find((l) => l.rel === 'next')?.href ?? null;
  }
  const httpMs = performance.now() - started;
  const out = join(dir, 'california.json');
  started = performance.now();
  await run('ogr2ogr', ['-f', 'GeoJSON', out, `OAPIF:${server.base}${OGC}`, 'crashes', '-oo', 'PAGE_SIZE=10000', '-spat', ...CALIFORNIA.map(String)],
    { maxBuffer: 1 << 26 });
  const ogrMs = performance.now() - started;
  const pulled = (JSON.parse(await readFile(out, 'utf8')) as Page).features;

  console.log(JSON.stringify({
    ogr2ogr: { ms: Math.round(ogrMs), crashes: pulled.length, californian: pulled.filter(californian).length,
      of2015: pulled.filter((f) => f.properties.YEAR === 2015 && californian(f)).length },
    datetime2015OverHttp: { ms: Math.round(httpMs), pages, crashes: of2015, californian: californian2015 },
  }, null, 2));
} finally {
  await rm(dir, { recursive: true, force: true });
  await server.stop();
}
