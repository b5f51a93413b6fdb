import { createReadStream } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rebuildAggregates } from '../../subgraphs/risk/data/aggregate.ts';
import { ingestFars } from '../../subgraphs/risk/data/fars.ts';
import { ingestTrafficFeed } from '../../subgraphs/risk/data/traffic-feed.ts';
import { riskDataLoaded, riskDataStatus } from '../../subgraphs/risk/data/status.ts';
import { Crash, TrafficSensor } from '../../subgraphs/risk/entities.ts';
import { areaPoolFor } from '../../subgraphs/risk/geometry/pool.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const BASE = '/riskIndex/v1';
const CHICAGO = 'POLYGON((-87.95 41.7, -87.68 41.7, -87.68 42.0, -87.95 42.0, -87.95 41.7))';
const ROUTE = 'LINESTRING(-87.6766 41.8813, -87.6718 41.8814)';
const LAS_VEGAS = 'POINT(-115.14 36.17)';
const TAHOE = 'POLYGON((-120.5 38.5, -119 38.5, -119 39.5, -120.5 39.5, -120.5 38.5))';
let t: TestStack;

const get = (path: string, params: Record<string, string | number>) =>
  t.request('GET', `${BASE}/${path}?${new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))}`);

const riskDb = () => t.stack.subgraphs.find((s) => s.name === 'risk')!.db;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['risk'] });
  await riskDataLoaded(riskDb().orm.em);
}, 600_000);
afterAll(async () => { await t?.close(); });

describe('resolved-area cache', () => {
  it('resolves an area once for several calls, whatever its spelling; another radius or area is resolved again; refusals are not kept', async () => {
    const pool = areaPoolFor(riskDb().orm.em);
    pool.forgetAreas();
    const start = pool.stats();
    const first = await get('riskInfo', { geometry: CHICAGO });
    expect(pool.stats().areas).toBe(start.areas + 1);
    const again = await get('accidentSummary', { geometry: `  ${CHICAGO.toLowerCase().replace(/, /g, ',\n ')} ` });
    expect(again.body.area).toEqual(first.body.area);
    expect(pool.stats()).toMatchObject({ areas: start.areas + 1, cacheHits: start.cacheHits + 1, cachedAreas: 1 });
    await get('riskInfo', { geometry: CHICAGO, radius: 0.01 });
    await get('riskInfo', { geometry: ROUTE });
    expect(pool.stats()).toMatchObject({ areas: start.areas + 3, cachedAreas: 3 });
    expect((await get('riskInfo', { geometry: 'POINT(-87.6 141.8)' })).status).toBe(400);
    expect((await get('riskInfo', { geometry: 'POINT(-87.6 141.8)' })).status).toBe(400);
    expect(pool.stats()).toMatchObject({ areas: start.areas + 5, cachedAreas: 3 });
    expect(pool.stats().cachedBytes).toBeGreaterThan(0);
  });
});

describe('start-up', () => {
  it('loads the shipped NHTSA FARS crashes (and only sample counting stations) on the first start', async () => {
    const em = riskDb().orm.em.fork();
    expect(riskDataStatus(em)).toBe('ready');
    // Every California and Illinois crash with a position, attributed by its state code.
    expect(await em.count(Crash, { source: 'fars' })).toBe(11_297);
    expect(await em.count(Crash, { source: { $ne: 'fars' } })).toBe(0);
    expect(await em.count(TrafficSensor, { source: 'sample' })).toBe(320);
    const res = await get('accidentSummary', { geometry: CHICAGO });
    expect(res.body.area.dataStatus).toBe('READY');
    expect(res.body.accidentSummary).toMatchObject({ source: 'NHTSA FARS 2013-2015', sample: false, injury: 0, propertyDamageOnly: 0 });
  });
});

describe('REST /riskIndex/v1 (no authentication)', () => {
  it('/all returns every data set for a city area', async () => {
    const res = await get('all', { geometry: CHICAGO });
    expect(res.status).toBe(200);
    const b = res.body;
    expect(b.area).toMatchObject({ geometryType: 'POLYGON', coverage: 'COVERED', outsideCoverage: false, states: ['IL'], resolution: 7, queryMethod: 'ContainsBuffer' });
    expect(b.area.cellsTouched).toBeGreaterThan(100);
    expect(b.riskInfo.index).toBeGreaterThan(0);
    expect(b.riskInfo.index).toBeLessThanOrEqual(100);
    expect(b.riskInfo.riskiestCells.length).toBe(10);
    expect(b.riskInfo.riskiestCells[0].riskIndex).toBeGreaterThanOrEqual(b.riskInfo.riskiestCells[9].riskIndex);
    expect(b.riskInfo.riskiestCells[0]).toEqual(expect.objectContaining({ resolution: 7, latitude: expect.any(Number), longitude: expect.any(Number) }));
    expect(b.riskInfo.distribution.reduce((s: number, d: { cells: number }) => s + d.cells, 0)).toBe(b.area.cellsTouched);
    expect(b.riskInfo).toMatchObject({ sample: false, source: 'NHTSA FARS 2013-2015', years: 3, severityWeights: null });
    expect(b.riskInfo.exposure).toMatch(/no traffic volumes/);
    expect(b.riskInfo.fatalCrashes).toBeGreaterThan(100);
    expect(b.riskInfo.fatalCrashesPerYear).toBeCloseTo(b.riskInfo.fatalCrashes / 3, 1);
    expect(b.riskInfo.fatalitiesPerKm2Year).toBeGreaterThanOrEqual(b.riskInfo.fatalCrashesPerKm2Year);
    expect(b.riskInfo.referenceRate).toBeGreaterThan(0);
    const a = b.accidentSummary;
    expect(a).toMatchObject({ injury: 0, propertyDamageOnly: 0, sample: false, source: 'NHTSA FARS 2013-2015' });
    // The summary counts the crashes of the cells, the index those inside the exact area.
    expect(a.total).toBeGreaterThanOrEqual(b.riskInfo.fatalCrashes);
    expect(a.total).toBeLessThan(b.riskInfo.fatalCrashes * 1.2);
    expect(a.fatalities).toBeGreaterThanOrEqual(a.total);
    expect(a.byHourOfWeek).toHaveLength(168);
    // FARS records an unknown hour as 99: such crashes count in the totals only.
    const byHour = a.byHourOfWeek.reduce((s: number, h: { crashes: number }) => s + h.crashes, 0);
    expect(byHour).toBeLessThanOrEqual(a.total);
    expect(byHour).toBeGreaterThan(a.total * 0.95);
    expect(a.byYear.map((y: { year: number }) => y.year)).toEqual([2013, 2014, 2015]);
    expect(a.byYear.reduce((s: number, y: { fatalities: number }) => s + y.fatalities, 0)).toBe(a.fatalities);
    expect(a.byMonth).toHaveLength(12);
    expect(a.byMonth.reduce((s: number, m: { crashes: number }) => s + m.crashes, 0)).toBe(a.total);
    for (const breakdown of ['byWeather', 'byLight', 'byRoadClass']) {
      expect(a[breakdown].reduce((s: number, c: { crashes: number }) => s + c.crashes, 0), breakdown).toBe(a.total);
    }
    expect(a.byWeather[0]).toEqual({ code: 1, name: 'Clear', crashes: expect.any(Number) });
    expect(a.byLight.map((l: { name: string }) => l.name)).toEqual(expect.arrayContaining(['Daylight', 'Dark - Lighted']));
    expect(a.byRoadClass.map((r: { name: string }) => r.name)).toEqual(expect.arrayContaining(['Interstate', 'Local']));
    expect(b.farsInfo.total).toBe(a.fatal);
    expect(b.farsInfo).toMatchObject({ source: 'NHTSA FARS 2013-2015', sample: false });
    expect(b.farsInfo.records.length).toBe(Math.min(100, a.fatal));
    expect(b.farsInfo.records[0]).toEqual(expect.objectContaining({ ST_CASE: expect.any(Number), STATE: 17, YEAR: 2015, LATITUDE: expect.any(Number), LONGITUD: expect.any(Number), FATALS: expect.any(Number), source: 'FARS' }));
    expect(b.farsInfo.records[0].localDateTime).toMatch(/^2015-12-\d\d(T\d\d:\d\d)?$/);
    expect(b.historicalTraffic).toMatchObject({ sample: true });
    expect(b.historicalTraffic.sensors).toBeGreaterThan(0);
    expect(b.historicalTraffic.profile).toHaveLength(168);
    expect(b.realtimeTraffic.source).toBe('HISTORICAL_PROFILE');
    expect(b.realtimeTraffic.message).toMatch(/historical profile/);
  });

  it('each other path returns its one data set', async () => {
    const sets = ['riskInfo', 'accidentSummary', 'farsInfo', 'realtimeTraffic', 'historicalTraffic'];
    // `filter`: the crash filter applied, null without one.
    for (const set of sets) {
      const res = await get(set, { geometry: CHICAGO });
      expect(res.status, set).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['area', 'filter', set].sort());
    }
    const fars = await get('farsInfo', { geometry: CHICAGO, limit: 3 });
    expect(fars.body.farsInfo.returned).toBe(3);
    const ri = await get('riskInfo', { geometry: CHICAGO });
    const all = await get('all', { geometry: CHICAGO });
    expect(ri.body.riskInfo).toEqual(all.body.riskInfo);
  });

  it('accepts wkt as an alias of geometry, a radius in degrees and queryMethod=ContainsBuffer', async () => {
    const a = await get('accidentSummary', { wkt: ROUTE, radius: 0.01, queryMethod: 'ContainsBuffer' });
    const b = await get('accidentSummary', { geometry: ROUTE, radius: 0.01 });
    expect(a.status).toBe(200);
    expect(a.body).toEqual(b.body);
    expect(a.body.area).toMatchObject({ geometryType: 'LINESTRING', radius: 0.01, coverage: 'COVERED' });
  });

  it('a corridor along a LINESTRING widens with the radius and contains what lies along the route', async () => {
    const narrow = await get('accidentSummary', { geometry: ROUTE, radius: 0.001 });
    const wide = await get('accidentSummary', { geometry: ROUTE, radius: 0.02 });
    expect(narrow.status).toBe(200);
    expect(narrow.body.area.resolution).toBe(9);
    expect(wide.body.area.areaKm2).toBeGreaterThan(narrow.body.area.areaKm2 * 10);
    expect(wide.body.accidentSummary.total).toBeGreaterThanOrEqual(narrow.body.accidentSummary.total);
    expect(wide.body.accidentSummary.total).toBeGreaterThan(0);
  });

  it('answers 400 problem+json saying what is wrong', async () => {
    const cases: [Record<string, string | number>, RegExp][] = [
      [{}, /geometry .* is required/],
      [{ geometry: 'POLYGON((1 2' }, /invalid WKT/],
      [{ geometry: 'POINT(-87.6 141.8)' }, /latitude 141.8 is out of range/],
      [{ geometry: 'POINT(-200 41.8)' }, /longitude -200 is out of range/],
      [{ geometry: 'POLYGON((-87.7 41.8, -87.6 41.9, -87.6 41.8, -87.7 41.9, -87.7 41.8))' }, /intersects itself/],
      [{ geometry: 'POINT EMPTY' }, /empty/],
      [{ geometry: 'POLYGON EMPTY' }, /empty/],
      [{ geometry: ROUTE, radius: 'wide' }, /radius must be a number/],
      [{ geometry: ROUTE, radius: 50 }, /radius must be at most 5/],
      [{ geometry: ROUTE, radius: -1 }, /radius must not be negative/],
      [{ geometry: ROUTE, queryMethod: 'Nearest' }, /queryMethod must be one of ContainsBuffer/],
    ];
    for (const [params, message] of cases) {
      for (const path of ['all', 'riskInfo']) {
        const res = await get(path, params);
        expect(res.status, JSON.stringify(params)).toBe(400);
        expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
        expect(res.body.code).toBe('BAD_USER_INPUT');
        expect(res.body.detail, JSON.stringify(params)).toMatch(message);
      }
    }
  });

  it('invalid WKT: the offset and the text around the first problem, in problem+json and in GraphQL extensions', async () => {
    const cases = [
      { wkt: 'POLYGON((-87.7 41.8, -87.6 41.8, -87.6 41.9, -87.7 41.8)', offset: 56, found: 'end of input' },
      { wkt: 'POINT(-87.6 41.8abc)', offset: 16, found: 'abc' },
      { wkt: 'TRIANGLE((-87.7 41.8, -87.6 41.8, -87.6 41.9, -87.7 41.8))', offset: 0, found: 'TRIANGLE' },
      { wkt: 'POINT(-87.6 41.8) POINT(-87.5 41.8)', offset: 18, found: 'POINT' },
    ];
    for (const { wkt, offset, found } of cases) {
      const res = await get('riskInfo', { geometry: wkt });
      expect(res.status, wkt).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.body, wkt).toMatchObject({ code: 'BAD_USER_INPUT', field: 'geometry', offset, found, near: expect.any(String) });
      expect(res.body.detail, wkt).toMatch(new RegExp(`^invalid WKT at offset ${offset}: expected .*, found`));
      const gql = await t.graphql('query($w: WKT!) { riskIndex(wkt: $w) { area { coverage } } }', { w: wkt }, null);
      expect(gql.errors?.[0], wkt).toMatchObject({ message: res.body.detail, extensions: { code: 'BAD_USER_INPUT', offset, found, near: res.body.near } });
    }
  });

  it('outside California and Illinois: 200 with empty data sets and a flag', async () => {
    const res = await get('all', { geometry: LAS_VEGAS, radius: 0.1 });
    expect(res.status).toBe(200);
    expect(res.body.area).toMatchObject({ coverage: 'OUTSIDE', outsideCoverage: true, states: [], resolution: null, cellsTouched: 0 });
    expect(res.body.area.message).toMatch(/outside coverage/);
    expect(res.body.riskInfo).toMatchObject({ index: null, cellsWithCrashes: 0, riskiestCells: [] });
    expect(res.body.accidentSummary).toMatchObject({ total: 0, fatal: 0, byYear: [] });
    expect(res.body.farsInfo).toMatchObject({ total: 0, records: [] });
    expect(res.body.realtimeTraffic).toMatchObject({ source: 'NONE', observations: [] });
    expect(res.body.historicalTraffic).toMatchObject({ sensors: 0, profile: [] });
  });

  it('straddling the California-Nevada border answers for the California part', async () => {
    const res = await get('all', { geometry: TAHOE });
    expect(res.status).toBe(200);
    expect(res.body.area).toMatchObject({ coverage: 'PARTIAL', outsideCoverage: false, states: ['CA'] });
    expect(res.body.area.coveredKm2).toBeLessThan(res.body.area.areaKm2);
    expect(res.body.area.cellsTouched).toBeGreaterThan(0);
    expect(res.body.area.message).toMatch(/partly outside coverage.*California/);
  });

  it('whole California stays bounded: coarse resolution, at most 3000 cells', async () => {
    const { geojsonToWKT } = await import('@terraformer/wkt');
    const { stateBoundaries } = await import('../../subgraphs/risk/geometry/coverage.ts');
    const res = await get('riskInfo', { geometry: geojsonToWKT(stateBoundaries()[0].feature.geometry) });
    expect(res.status).toBe(200);
    expect(res.body.area).toMatchObject({ resolution: 5, coverage: 'COVERED' });
    expect(res.body.area.cellsTouched).toBeLessThanOrEqual(3000);
  });
});

describe('OpenAPI', () => {
  it('documents the six public paths and their query parameters', async () => {
    const res = await t.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    for (const name of ['all', 'riskInfo', 'accidentSummary', 'farsInfo', 'realtimeTraffic', 'historicalTraffic']) {
      const op = res.body.paths[`${BASE}/${name}`]?.get;
      expect(op, name).toBeDefined();
      expect(op.security).toEqual([]);
      expect(op.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['geometry', 'wkt', 'radius', 'queryMethod']));
    }
  });
});

describe('GraphQL riskIndex', () => {
  it('exposes each data set as a field, computed only when selected', async () => {
    const q = `query($w: WKT!) { riskIndex(wkt: $w) {
      area { coverage resolution cellsTouched }
      riskInfo { index maxCellIndex riskiestCells { cell riskIndex latitude longitude } }
      accidentSummary { total fatal injury propertyDamageOnly }
      farsInfo(limit: 2) { total returned records { ST_CASE YEAR source } }
      realtimeTraffic { source meanSpeedKph }
      historicalTraffic { sensors profile { hourOfWeek meanSpeedKph } }
    } }`;
    const res = await t.graphql(q, { w: CHICAGO }, null);
    expect(res.errors).toBeUndefined();
    const r = res.data.riskIndex;
    expect(r.area).toMatchObject({ coverage: 'COVERED', resolution: 7 });
    expect(r.riskInfo.index).toBeGreaterThan(0);
    expect(r.accidentSummary.total).toBe(r.accidentSummary.fatal);
    expect(r.farsInfo.returned).toBe(2);
    expect(r.realtimeTraffic.source).toBe('HISTORICAL_PROFILE');
    expect(r.historicalTraffic.profile).toHaveLength(168);

    // Only the selected data set is computed: an area-only query runs no statement at all.
    const statements = riskDb().statements;
    const before = statements.count;
    const only = await t.graphql('query($w: WKT!) { riskIndex(wkt: $w, radius: 0.01) { area { resolution } } }', { w: ROUTE }, null);
    expect(only.data.riskIndex.area.resolution).toBe(9);
    expect(statements.count - before).toBe(0);
    const one = statements.count;
    await t.graphql('query($w: WKT!) { riskIndex(wkt: $w, radius: 0.01) { historicalTraffic { sensors } } }', { w: ROUTE }, null);
    expect(statements.count - one).toBeLessThanOrEqual(2); // traffic cells, and the data sources (cached)
  });

  it('answers invalid areas with BAD_USER_INPUT', async () => {
    const res = await t.graphql('{ riskIndex(wkt: "POLYGON((-87.7 41.8, -87.6 41.9, -87.6 41.8, -87.7 41.9, -87.7 41.8))") { area { coverage } } }', {}, null);
    expect(res.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    expect(res.errors?.[0].message).toMatch(/intersects itself/);
    const radius = await t.graphql('{ riskIndex(wkt: "POINT(-87.6 41.8)", radius: 9) { area { coverage } } }', {}, null);
    expect(radius.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('ingested data through the API', () => {
  it('fresh realtime feed observations replace the historical profile', async () => {
    const em = riskDb().orm.em.fork();
    await ingestTrafficFeed(em, { observations: [
      { sensorId: 'il-madison', observedAt: new Date().toISOString(), latitude: 41.8813, longitude: -87.6745, speedKph: 27.5, volumeVph: 700 },
      { sensorId: 'il-old', observedAt: new Date(Date.now() - 3 * 3600_000).toISOString(), latitude: 41.8814, longitude: -87.673, speedKph: 90 },
    ] });
    const rest = await get('realtimeTraffic', { geometry: ROUTE, radius: 0.005 });
    expect(rest.status).toBe(200);
    expect(rest.body.realtimeTraffic).toMatchObject({ source: 'REALTIME', sensors: 1, meanSpeedKph: 27.5, meanVolumeVph: 700 });
    expect(rest.body.realtimeTraffic.observations).toEqual([expect.objectContaining({ sensorId: 'il-madison', speedKph: 27.5 })]);
    const gql = await t.graphql('query($w: WKT!) { riskIndex(wkt: $w, radius: 0.005) { realtimeTraffic { source observations { sensorId } } } }', { w: ROUTE }, null);
    expect(gql.data.riskIndex.realtimeTraffic).toEqual({ source: 'REALTIME', observations: [{ sensorId: 'il-madison' }] });
  });

  it('FARS records loaded from a file appear in farsInfo and the summaries', async () => {
    const em = riskDb().orm.em.fork();
    const area = { geometry: 'POINT(-87.674 41.8813)', radius: 0.001 };
    const before = (await get('farsInfo', area)).body.farsInfo.total;
    await ingestFars(em, createReadStream(new URL('./fixtures/accident.csv', import.meta.url).pathname));
    await rebuildAggregates(em);
    const res = await get('farsInfo', area);
    expect(res.body.farsInfo.total).toBe(before + 1);
    expect(res.body.farsInfo.records).toContainEqual(expect.objectContaining({
      ST_CASE: 170002, STATE: 17, YEAR: 2022, MONTH: 11, DAY: 4, HOUR: 23, MINUTE: 5, FATALS: 1, WEATHER: 2, WEATHERNAME: 'Rain',
      LGT_COND: 3, FUNC_SYS: 4, source: 'FARS',
    }));
    const summary = await get('accidentSummary', area);
    const y2022 = summary.body.accidentSummary.byYear.find((y: { year: number }) => y.year === 2022);
    expect(y2022.fatal).toBeGreaterThanOrEqual(1);
  });
});
