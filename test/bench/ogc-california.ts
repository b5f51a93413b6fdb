/**
 * California through the OGC API (`npm run bench:ogc`), on the embedded default started as `npm start` would:
 * - GDAL's `ogr2ogr` of every California crash of 2015, cold: the collection URL carries `years=2015`, which
 *   GDAL 3.6 keeps on every items request (a logging proxy in front of the server shows what it receives);
 *   then `-where "YEAR = 2015"` (GDAL filters that itself: every year's crashes travel);
 * - paging `datetime=2015-01-01/2015-12-31` over HTTP (GDAL 3.6 cannot send datetime);
 * - the resolution-7 cells of California's bounding box, over HTTP (cold, then warm) and through `ogr2ogr`.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { getResolution } from 'h3-js';
import { freePort, startChildServer, untilReady } from '../support/child-server.ts';

const run = promisify(execFile);
const CALIFORNIA = [-124.5, 32.5, -114.1, 42.0];
const OGC = '/riskIndex/v1/ogc';

interface Page { features: { id: string; properties: { STATE: unknown; YEAR: number } }[]; links: { rel: string; href: string }[] }
const californian = (f: Page['features'][number]) => f.properties.STATE === 6 || f.properties.STATE === 'California';

const server = await startChildServer({ NODE_ENV: 'production', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000000' });
const dir = await mkdtemp(join(tmpdir(), 'ogc-bench-'));
// What the server receives from GDAL: a pass-through proxy that notes each request's path and query.
const seen: string[] = [];
const port = await freePort();
const upstream = new URL(server.base);
const proxy = http.createServer((req, res) => {
  seen.push(decodeURIComponent(req.url!));
  const up = http.request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: { ...req.headers, host: `127.0.0.1:${port}` } },
    (r) => { res.writeHead(r.statusCode!, r.headers); r.pipe(res); });
  req.pipe(up);
}).listen(port, '127.0.0.1');
const base = `http://127.0.0.1:${port}`;

async function ogr2ogr(name: string, source: string, layer: string[], extra: string[] = []) {
  seen.length = 0;
  const out = join(dir, `${name}.json`);
  const started = performance.now();
  await run('ogr2ogr', ['-f', 'GeoJSON', out, source, ...layer, '-oo', 'PAGE_SIZE=10000', '-spat', ...CALIFORNIA.map(String), ...extra], { maxBuffer: 1 << 28 });
  const ms = Math.round(performance.now() - started);
  const features = (JSON.parse(await readFile(out, 'utf8')) as Page).features;
  return { ms, features, requests: seen.filter((u) => u.includes('/items')) };
}

async function walk(first: string) {
  const started = performance.now();
  let next: string | null = first, pages = 0;
  const features: Page['features'] = [];
  while (next) {
    const res = await fetch(next);
    if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
    const page = await res.json() as Page;
    pages++;
    features.push(...page.features);
    next = page.links.find((l) => l.rel === 'next')?.href ?? null;
  }
  return { ms: Math.round(performance.now() - started), pages, features };
}

try {
  await untilReady(server.base, 300_000);
  const byUrl = await ogr2ogr('years', `OAPIF:${base}${OGC}/collections/crashes?years=2015`, []);
  const byWhere = await ogr2ogr('where', `OAPIF:${base}${OGC}`, ['crashes'], ['-where', 'YEAR = 2015']);
  const http2015 = await walk(`${base}${OGC}/collections/crashes/items?bbox=${CALIFORNIA.join(',')}&limit=10000&datetime=2015-01-01/2015-12-31`);
  const cellsCold = await walk(`${base}${OGC}/collections/cells/items?bbox=${CALIFORNIA.join(',')}&limit=10000`);
  const cellsWarm = await walk(`${base}${OGC}/collections/cells/items?bbox=${CALIFORNIA.join(',')}&limit=10000`);
  const cellsOgr = await ogr2ogr('cells', `OAPIF:${base}${OGC}`, ['cells']);
  const crashes = (r: { ms: number; features: Page['features']; requests: string[] }) => ({
    ms: r.ms, crashes: r.features.length, californian2015: r.features.filter((f) => f.properties.YEAR === 2015 && californian(f)).length, itemsRequests: r.requests,
  });
  console.log(JSON.stringify({
    ogr2ogrYearsInUrl: crashes(byUrl),
    ogr2ogrWhere: crashes(byWhere),
    datetime2015OverHttp: { ms: http2015.ms, pages: http2015.pages, crashes: http2015.features.length, californian: http2015.features.filter(californian).length },
    cellsOverHttp: {
      cold: { ms: cellsCold.ms, pages: cellsCold.pages, cells: cellsCold.features.length, unique: new Set(cellsCold.features.map((f) => f.id)).size,
        resolution7: cellsCold.features.every((f) => getResolution(f.id) === 7) },
      warm: { ms: cellsWarm.ms, pages: cellsWarm.pages, cells: cellsWarm.features.length },
    },
    cellsOgr2ogr: { ms: cellsOgr.ms, cells: cellsOgr.features.length, itemsRequests: cellsOgr.requests.length },
  }, null, 2));
} finally {
  proxy.close();
  await rm(dir, { recursive: true, force: true });
  await server.stop();
}
