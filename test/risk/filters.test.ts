/**
 * Filters on the crash data through REST and GraphQL (PGlite, or PostgreSQL with DATABASE_URL):
 * filtered county totals against counts made here from the shipped FARS files (parsed with csv-parse,
 * codes mapped from the FARS manual, not by the ingest code); the filter reaching every data set, the
 * map, its layers and the exports (and their next pages); riskInfo.index unfiltered; the filter stated in
 * the answers; 400s naming the parameter; and a flood of distinct filters leaving unfiltered answers cached.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { geojsonToWKT } from '@terraformer/wkt';
import { booleanPointInPolygon } from '@turf/turf';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { coveredCounties } from '../../subgraphs/risk/map/reference.ts';
import { answerCacheFor } from '../../subgraphs/risk/services/answer-cache.ts';
import { startTestStack, type HttpResult, type TestStack } from '../support/stack.ts';

const BASE = '/riskIndex/v1';
type Collection = { filter: { key: string; pedestrians: boolean }; numberMatched: number; features: { properties: { PEDS: number } }[] };
const FARS_FOLDER = new URL('../../subgraphs/risk/data/fars/', import.meta.url).pathname;
const LOOP = 'POLYGON((-87.66 41.86, -87.61 41.86, -87.61 41.9, -87.66 41.9, -87.66 41.86))';
let t: TestStack;

const url = (path: string, params: Record<string, string | number | boolean>) =>
  `${BASE}/${path}?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}`;
const get = (path: string, params: Record<string, string | number | boolean>, headers?: Record<string, string>) =>
  t.request('GET', url(path, params), { headers });
const riskEm = () => t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em;

/** The shipped files' rows as NHTSA wrote them. */
const rawRows = readdirSync(FARS_FOLDER).filter((f) => f.endsWith('.csv.gz')).flatMap((f) =>
  parse(gunzipSync(readFileSync(FARS_FOLDER + f)), { columns: true }) as Record<string, string>[]);

/** FARS Analytical User's Manual: LGT_COND, WEATHER, FUNC_SYS (2015) and ROAD_FNC (2013-2014; 1-9 rural, 11-19 urban). */
const LIGHT = { Daylight: 1, 'Dark - Not Lighted': 2, 'Dark - Lighted': 3 } as Record<string, number>;
const WEATHER = { Clear: 1, Rain: 2 } as Record<string, number>;
const FUNC_SYS = { Interstate: 1, 'Principal Arterial - Other': 3, Local: 7 } as Record<string, number>;
const ROAD_FNC = { Interstate: [1, 11], 'Principal Arterial - Other': [2, 13], Local: [6, 16] } as Record<string, number[]>;

interface Filter { years?: number[]; months?: number[]; daysOfWeek?: number[]; hours?: number[]; lightConditions?: string[]; weather?: string[];
  functionClasses?: string[]; ruralUrban?: 'RURAL' | 'URBAN'; drunkDriver?: boolean; pedestrians?: boolean; minFatalities?: number }

function rawMatches(r: Record<string, string>, f: Filter): boolean {
  const n = (c: string) => Number(r[c]);
  const roadFnc = r.ROAD_FNC !== undefined ? n('ROAD_FNC') : null;
  const rural = roadFnc === null ? n('RUR_URB') : roadFnc >= 1 && roadFnc <= 9 ? 1 : roadFnc >= 11 && roadFnc <= 19 ? 2 : 9;
  const inClass = (name: string) => (roadFnc === null ? n('FUNC_SYS') === FUNC_SYS[name] : ROAD_FNC[name].includes(roadFnc));
  return (!f.years || f.years.includes(n('YEAR'))) && (!f.months || f.months.includes(n('MONTH')))
    && (!f.daysOfWeek || f.daysOfWeek.includes(n('DAY_WEEK'))) && (!f.hours || f.hours.includes(n('HOUR')))
    && (!f.lightConditions || f.lightConditions.some((l) => LIGHT[l] === n('LGT_COND')))
    && (!f.weather || f.weather.some((w) => WEATHER[w] === n('WEATHER')))
    && (!f.functionClasses || f.functionClasses.some(inClass))
    && (!f.ruralUrban || rural === (f.ruralUrban === 'RURAL' ? 1 : 2))
    && (f.drunkDriver === undefined || (n('DRUNK_DR') > 0) === f.drunkDriver)
    && (f.pedestrians === undefined || (n('PEDS') > 0) === f.pedestrians)
    && (!f.minFatalities || n('FATALS') >= f.minFatalities);
}

const county = (fips: string) => coveredCounties().find((c) => c.fips === fips)!;

/** The county's crashes matching the filter, from the raw rows: by position inside its outline (what the service counts), and by FARS COUNTY. */
function rawCountyCount(fips: string, f: Filter) {
  const c = county(fips);
  const rows = rawRows.filter((r) => Number(r.STATE) === Number(fips.slice(0, 2)) && rawMatches(r, f));
  const inside = rows.filter((r) => booleanPointInPolygon([Number(r.LONGITUD), Number(r.LATITUDE)], c.feature));
  return { crashes: inside.length, fatalities: inside.reduce((s, r) => s + Number(r.FATALS), 0), byCode: rows.filter((r) => Number(r.COUNTY) === Number(fips.slice(2))).length };
}

/** REST parameters of a filter (lists comma-separated). */
const restParams = (f: Filter) => Object.fromEntries(Object.entries(f).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]));

const RISK_INFO = `query($wkt: WKT!, $filter: CrashFilter) { riskIndex(wkt: $wkt, filter: $filter) {
  filter { key years daysOfWeek hours lightConditions functionClasses ruralUrban drunkDriver pedestrians minFatalities }
  riskInfo { index fatalCrashes fatalities } accidentSummary { fatal fatalities } farsInfo(first: 1) { total } } }`;

beforeAll(async () => {
  // A small answer cache (256 KB, filtered answers 64 KB on top), so that a flood of filters would evict anything it could.
  t = await startTestStack({ subgraphs: ['risk'], env: { RISK_ANSWER_CACHE_MB: '0.25' } });
  await riskDataLoaded(riskEm());
}, 600_000);
afterAll(async () => { await t?.close(); });

describe('filtered county totals against the shipped files', () => {
  const CASES: [fips: string, filter: Filter][] = [
    ['06037', { years: [2015], lightConditions: ['Dark - Not Lighted', 'Dark - Lighted'], pedestrians: true }],
    ['17031', { daysOfWeek: [1, 7], hours: [0, 1, 2, 3, 4], drunkDriver: true }],
    ['06029', { ruralUrban: 'RURAL', functionClasses: ['Interstate', 'Principal Arterial - Other'] }],
    ['06029', { ruralUrban: 'URBAN', functionClasses: ['Local'], years: [2013, 2014] }],
    ['06037', { months: [1, 2, 12], weather: ['Clear', 'Rain'], minFatalities: 2 }],
  ];

  it.each(CASES)('county %s under %j: REST and GraphQL count what the raw rows hold; the index stays unfiltered', async (fips, filter) => {
    const wkt = geojsonToWKT(county(fips).feature.geometry);
    const expected = rawCountyCount(fips, filter);
    expect(expected.crashes).toBeGreaterThan(0);
    // The outline and FARS's county code agree on nearly every crash (the 1:10,000,000 outline cuts a few at its edge).
    expect(Math.abs(expected.crashes - expected.byCode)).toBeLessThanOrEqual(Math.max(2, expected.byCode * 0.05));

    const rest = await get('riskInfo', { geometry: wkt, ...restParams(filter) });
    expect(rest.status).toBe(200);
    expect(rest.body.riskInfo).toMatchObject({ fatalCrashes: expected.crashes, fatalities: expected.fatalities });
    expect(rest.body.filter).toMatchObject(filter);

    const gql = await t.graphql(RISK_INFO, { wkt, filter }, null);
    expect(gql.errors).toBeUndefined();
    const report = gql.data.riskIndex;
    expect(report.riskInfo).toMatchObject({ fatalCrashes: expected.crashes, fatalities: expected.fatalities });
    expect(report.filter.key).toBe(rest.body.filter.key);
    // The cells hold at least the outline's crashes; farsInfo and accidentSummary count the same cells.
    expect(report.accidentSummary.fatal).toBeGreaterThanOrEqual(expected.crashes);
    expect(report.farsInfo.total).toBe(report.accidentSummary.fatal);

    const all = await t.graphql(RISK_INFO, { wkt }, null);
    expect(all.data.riskIndex.filter).toBeNull();
    expect(report.riskInfo.index).toBe(all.data.riskIndex.riskInfo.index);
    expect(all.data.riskIndex.riskInfo.fatalCrashes).toBeGreaterThan(expected.crashes);
  });
});

describe('every data set, the map and the exports under a filter', () => {
  const FILTER = { hours: '20,21,22,23,0,1,2,3,4,5', pedestrians: 'true' };

  it('records, summaries and cells hold only matching crashes; the summary\'s breakdowns say so', async () => {
    const all = (await get('all', { geometry: LOOP, limit: 1000, ...FILTER })).body;
    expect(all.filter).toMatchObject({ hours: [0, 1, 2, 3, 4, 5, 20, 21, 22, 23], pedestrians: true, key: 'hours=0,1,2,3,4,5,20,21,22,23&pedestrians=true' });
    expect(all.farsInfo.total).toBeGreaterThan(0);
    expect(all.farsInfo.records).toHaveLength(all.farsInfo.total);
    for (const r of all.farsInfo.records) {
      expect([0, 1, 2, 3, 4, 5, 20, 21, 22, 23]).toContain(r.HOUR);
      expect(r.PEDS).toBeGreaterThan(0);
    }
    const summary = all.accidentSummary;
    expect(summary.fatal).toBe(all.farsInfo.total);
    expect(summary.byHourOfWeek.filter((h: { hour: number; crashes: number }) => h.crashes > 0 && h.hour > 5 && h.hour < 20)).toEqual([]);
    const unfiltered = (await get('all', { geometry: LOOP, limit: 1 })).body;
    expect(unfiltered.filter).toBeNull();
    expect(unfiltered.accidentSummary.fatal).toBeGreaterThan(summary.fatal);
    expect(all.riskInfo.index).toBe(unfiltered.riskInfo.index);
    expect(all.riskInfo.cellsWithCrashes).toBeLessThanOrEqual(unfiltered.riskInfo.cellsWithCrashes);
  });

  it('the exports (GeoJSON and CSV), their next pages and their links keep the filter and state it', async () => {
    const total = (await get('farsInfo', { geometry: LOOP, ...FILTER })).body.farsInfo.total;
    let next: string | null = url('export/crashes', { geometry: LOOP, limit: 2, ...FILTER });
    const seen: number[] = [];
    while (next) {
      const res: HttpResult<Collection> = await t.request<Collection>('GET', next);
      expect(res.status).toBe(200);
      expect(res.body.filter).toMatchObject({ pedestrians: true });
      expect(res.body.numberMatched).toBe(total);
      expect(res.headers.get('crash-filter')).toBe(res.body.filter.key);
      seen.push(...res.body.features.map((f) => f.properties.PEDS));
      next = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get('link') ?? '')?.[1] ?? null;
    }
    expect(seen).toHaveLength(total);
    expect(seen.every((p) => p > 0)).toBe(true);
    const csv = await get('export/crashes', { geometry: LOOP, format: 'csv', ...FILTER });
    expect(csv.headers.get('crash-filter')).toBe('hours=0,1,2,3,4,5,20,21,22,23&pedestrians=true');
    expect((parse(csv.body as string, { columns: true }) as unknown[]).length).toBe(total);
    const cells = (await get('export/cells', { geometry: LOOP, ...FILTER })).body;
    expect(cells.features.reduce((s: number, f: { properties: { fatal: number } }) => s + f.properties.fatal, 0)).toBe(total);
    const links = await t.graphql(`query($wkt: WKT!, $filter: CrashFilter) { riskIndex(wkt: $wkt, filter: $filter) { exports { crashesCsv } } }`,
      { wkt: LOOP, filter: { pedestrians: true, hours: [5, 4, 3, 2, 1, 0, 20, 21, 22, 23] } }, null);
    const link = new URL(links.data.riskIndex.exports.crashesCsv, 'http://x').searchParams;
    expect([link.get('hours'), link.get('pedestrians')]).toEqual(['0,1,2,3,4,5,20,21,22,23', 'true']);
  });

  it('the map and its layers draw only matching crashes and say which filter', async () => {
    const layers = (await get('map/layers', { geometry: LOOP, ...FILTER })).body;
    expect(layers.filter).toBe('hours 0,1,2,3,4,5,20,21,22,23; pedestrians true');
    const total = (await get('farsInfo', { geometry: LOOP, ...FILTER })).body.farsInfo.total;
    const cellCrashes = layers.features.filter((f: { properties: { layer: string } }) => f.properties.layer === 'cell')
      .reduce((s: number, f: { properties: { fatalCrashes: number } }) => s + f.properties.fatalCrashes, 0);
    expect(cellCrashes).toBe(total);
    const map = await get('map', { geometry: LOOP, ...FILTER });
    expect(map.status).toBe(200);
    expect(map.headers.get('crash-filter')).toContain('pedestrians=true');
    expect(map.body).toContain('matching hours 0,1,2,3,4,5,20,21,22,23; pedestrians true');
    const dots = (svg: string) => (svg.match(/<g id="crashes"[^>]*>([\s\S]*?)<\/g>/)![1].match(/<circle /g) ?? []).length;
    expect(dots(map.body as string)).toBeLessThan(dots((await get('map', { geometry: LOOP })).body as string));
  });

  it('a bad value is a 400 naming the parameter and what it accepts, on REST and GraphQL alike', async () => {
    for (const [name, value, accepted] of [['hours', '25', 'from 0 to 23'], ['weather', 'Sunny', '"Rain"'], ['drunkDriver', 'maybe', 'true or false'],
      ['ruralUrban', 'suburban', 'RURAL or URBAN'], ['daysOfWeek', '0', 'from 1 to 7'], ['minFatalities', '0', 'from 1 to 100']]) {
      for (const path of ['all', 'map', 'export/crashes']) {
        const res = await get(path, { geometry: LOOP, [name]: value });
        expect(res.status, `${path} ${name}`).toBe(400);
        expect(res.body).toMatchObject({ code: 'BAD_USER_INPUT', field: name });
        expect(res.body.detail).toContain(accepted);
      }
    }
    const gql = await t.graphql(RISK_INFO, { wkt: LOOP, filter: { lightConditions: ['Moonlight'] } }, null);
    expect(gql.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'filter.lightConditions' });
    expect(gql.errors![0].message).toContain('"Dark - Not Lighted"');
  });
});

describe('the shared answer cache', () => {
  it('keeps the unfiltered answers through a flood of distinct filters', async () => {
    const cache = answerCacheFor(riskEm())!;
    await get('accidentSummary', { geometry: LOOP });
    const before = cache.stats();
    expect((await get('accidentSummary', { geometry: LOOP })).status).toBe(200);
    expect(cache.stats().hits).toBe(before.hits + 1);
    // 60 distinct filters, each a few KB of answer: far more than the filtered partition holds.
    for (let i = 0; i < 60; i++) {
      const res = await get('accidentSummary', { geometry: LOOP, hours: String(i % 24), months: String(1 + Math.floor(i / 24)) });
      expect(res.status).toBe(200);
    }
    const flooded = cache.stats();
    expect(flooded.bytes).toBeLessThanOrEqual(0.25 * 1024 * 1024 * 1.25);
    expect((await get('accidentSummary', { geometry: LOOP })).status).toBe(200);
    expect(cache.stats().hits).toBe(flooded.hits + 1);
    expect(cache.stats().misses).toBe(flooded.misses);
  });
});
