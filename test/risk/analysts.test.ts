/**
 * docs/analysts.md's GeoPandas and DuckDB recipes, their code blocks taken from the page as they are
 * (only `http://HOST` replaced by the stack's address), run against a stack on loopback, and what they
 * read compared with the REST exports. GeoPandas is Debian's python3-geopandas (installed by .ci/run)
 * for Debian's /usr/bin/python3; DuckDB is the @duckdb/node-api devDependency.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { codeBlocks, type CodeBlock } from '../support/doc-blocks.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const run = promisify(execFile);
const PAGE = 'docs/analysts.md';
/** Debian's packages are installed for Debian's interpreter, not for another python3 on PATH. */
const PYTHON = '/usr/bin/python3';
const INSTALL = 'apt-get install python3-geopandas python3-rtree';
const BBOX = [-87.95, 41.7, -87.68, 42.0] as const;
const [W, S, E, N] = BBOX;
const AREA = `POLYGON((${W} ${S}, ${E} ${S}, ${E} ${N}, ${W} ${N}, ${W} ${S}))`;
const geopandasInstalled = await run(PYTHON, ['-c', 'import geopandas, rtree']).then(() => true, () => false);

type Properties = Record<string, string | number | null>;
interface Feature { geometry: { coordinates: [number, number] }; properties: Properties }

let t: TestStack;
let dir: string;

/** A section's code blocks of the given languages, in order, the first naming HOST: the stack's address. */
async function recipe(heading: string, langs: string[]): Promise<string[]> {
  const blocks = await codeBlocks(PAGE, heading);
  expect(blocks.map((b: CodeBlock) => b.lang)).toEqual(langs);
  expect(blocks[0].code).toContain('http://HOST');
  return blocks.map((b) => b.code.replaceAll('http://HOST', t.url));
}

/** Every feature of a REST GeoJSON export of the area, following its next links. */
async function restExport(data: 'cells' | 'crashes'): Promise<Feature[]> {
  const features: Feature[] = [];
  const query = new URLSearchParams({ geometry: AREA, format: 'geojson', limit: '5000' });
  let next: string | null = `/riskIndex/v1/export/${data}?${query}`;
  while (next) {
    const res = await fetch(`${t.url}${next}`);
    expect(res.status).toBe(200);
    features.push(...(await res.json() as { features: Feature[] }).features);
    next = res.headers.get('link')?.match(/^<([^>]+)>; rel="next"$/)?.[1] ?? null;
  }
  return features;
}

const id = (p: Properties) => `${p.YEAR}-${p.ST_CASE}`;
const inBox = (f: Feature) => {
  const [lon, lat] = f.geometry.coordinates;
  return lon >= W && lon <= E && lat >= S && lat <= N;
};
const darkWithPedestrians = (p: Properties) =>
  String(p.LGT_CONDNAME ?? '').startsWith('Dark') && Number(p.PEDS) > 0;
/** Crashes, fatalities and night-time crashes with a pedestrian by year, as the DuckDB recipe asks. */
function byYear(crashes: Properties[]) {
  const years = [...new Set(crashes.map((p) => Number(p.YEAR)))].sort();
  return years.map((year) => {
    const of = crashes.filter((p) => p.YEAR === year);
    return {
      year, crashes: of.length, fatalities: of.reduce((s, p) => s + Number(p.FATALS), 0),
      darkWithPedestrians: of.filter(darkWithPedestrians).length,
    };
  });
}

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['risk'] });
  await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
  dir = await mkdtemp(join(tmpdir(), 'analysts-'));
}, 600_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await t?.close();
});

describe('docs/analysts.md recipes', () => {
  it('GeoPandas: the cells and crashes of the exports and the 2015 crashes of the OGC API', async (ctx) => {
    if (!geopandasInstalled) {
      const why = `${PYTHON} cannot import geopandas and rtree: ${INSTALL} (.ci/run does)`;
      if (process.env.CI === 'true') throw new Error(why);
      console.warn(`skipped: ${why}`);
      ctx.skip(why);
    }
    const [python] = await recipe('## The Risk Index in GeoPandas', ['python']);
    const figures = `print(json.dumps({
    "cells": len(cells), "cellFatal": int(cells.fatal.sum()),
    "crashes": sorted(f"{r.YEAR}-{r.ST_CASE}" for r in crashes.itertuples()),
    "crashes2015": sorted(f"{f['properties']['YEAR']}-{f['properties']['ST_CASE']}" for f in features),
    "night": len(night)}))\n`;
    await writeFile(join(dir, 'risk.py'), python + figures);
    const { stdout } = await run(PYTHON, ['risk.py'], { cwd: dir, maxBuffer: 1 << 26 });
    const read = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      cells: number; cellFatal: number; crashes: string[]; crashes2015: string[]; night: number;
    };
    const [cells, crashes] = [await restExport('cells'), await restExport('crashes')];
    expect(read.cells).toBe(cells.length);
    expect(read.cellFatal).toBe(cells.reduce((s, f) => s + Number(f.properties.fatal), 0));
    expect(crashes.length).toBeGreaterThan(100);
    expect(read.crashes).toEqual(crashes.map((f) => id(f.properties)).sort());
    const of2015 = crashes.filter((f) => inBox(f) && f.properties.YEAR === 2015);
    expect(of2015.length).toBeGreaterThan(5);
    expect(read.crashes2015).toEqual(of2015.map((f) => id(f.properties)).sort());
    expect(read.night).toBe(of2015.filter((f) => darkWithPedestrians(f.properties)).length);
  }, 120_000);

  it('DuckDB: the CSV export downloaded with curl, then asked by year', async () => {
    const [sh, js] = await recipe('## The Risk Index in DuckDB', ['sh', 'js']);
    await symlink(resolve('node_modules'), join(dir, 'node_modules'));
    await run('bash', ['-euc', sh], { cwd: dir });
    await writeFile(join(dir, 'crashes.mjs'), `${js}console.log(JSON.stringify(byYear));\n`);
    const { stdout } = await run(process.execPath, ['crashes.mjs'], { cwd: dir });
    const table = JSON.parse(stdout.trim().split('\n').at(-1)!) as unknown[];
    const expected = byYear((await restExport('crashes')).map((f) => f.properties));
    expect(expected.length).toBe(3);
    expect(expected.some((y) => y.darkWithPedestrians > 0)).toBe(true);
    expect(table).toEqual(expected);
  }, 120_000);
});
