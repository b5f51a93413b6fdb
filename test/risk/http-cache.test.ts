/**
 * HTTP caching of the public Risk Index answers: a strong ETag of the data's version and the request
 * with `Cache-Control: public, max-age=300`, 304 on If-None-Match (weak comparison, `*`) before any
 * evaluation, a new tag once an ingest changes the data, the same after a restart, never for
 * real-time traffic; Vary: Origin under CORS. And the answer cache behind GraphQL and REST alike.
 * (An answer while the data load: test/risk/first-answer.test.ts.)
 */
import { createReadStream } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { rebuildAggregates } from '../../subgraphs/risk/data/aggregate.ts';
import { ingestFars } from '../../subgraphs/risk/data/fars.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { areaPoolFor } from '../../subgraphs/risk/geometry/pool.ts';
import { answerCacheFor } from '../../subgraphs/risk/services/answer-cache.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const APP = 'https://app.example.com';
const LOOP = { geometry: 'POINT(-87.674 41.8813)', radius: '0.001' };
let t: TestStack;

const path = (name: string, params: Record<string, string> = LOOP) => `/riskIndex/v1/${name}?${new URLSearchParams(params)}`;
const get = (name: string, headers: Record<string, string> = {}, params?: Record<string, string>) => t.request('GET', path(name, params), { headers });
const riskDb = () => t.stack.subgraphs.find((s) => s.name === 'risk')!.db;
/** What evaluating an area costs: geometry work (a resolved area, even from the workers' cache), answer-cache lookups, SQL. */
const work = () => {
  const pool = areaPoolFor(riskDb().orm.em).stats();
  const answers = answerCacheFor(riskDb().orm.em)!.stats();
  return { areas: pool.areas + pool.cacheHits, lookups: answers.hits + answers.misses + answers.shared, hits: answers.hits, misses: answers.misses, statements: riskDb().statements.count };
};
const riskInfoQuery = (wkt: string, radius = 0.001) => t.graphql(`{ riskIndex(wkt: ${JSON.stringify(wkt)}, radius: ${radius}) { riskInfo { index fatalCrashes riskiestCells { cell } } accidentSummary { total } } }`);

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['risk'], env: { CORS_ORIGINS: APP }, persistent: true });
  await riskDataLoaded(riskDb().orm.em);
}, 600_000);
afterAll(async () => { await t?.close(); });

describe('cacheable Risk Index answers', () => {
  it('carry a strong ETag, the same for the same request, and Cache-Control public, max-age=300', async () => {
    const first = await get('riskInfo');
    const etag = first.headers.get('etag');
    expect(first.status).toBe(200);
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(first.headers.get('cache-control')).toBe('public, max-age=300');
    const again = await get('riskInfo');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.body).toEqual(first.body);
    expect((await get('riskInfo', {}, { ...LOOP, radius: '0.002' })).headers.get('etag')).not.toBe(etag);
    expect((await get('accidentSummary')).headers.get('etag')).not.toBe(etag);
  });

  it('answer 304 without a body when If-None-Match names the current tag (weak comparison, lists, *), else 200', async () => {
    const etag = (await get('accidentSummary')).headers.get('etag')!;
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await fetch(`${t.url}${path('accidentSummary')}`, { headers: { 'if-none-match': ifNoneMatch } });
      expect(res.status, ifNoneMatch).toBe(304);
      expect(await res.text()).toBe('');
      expect(res.headers.get('etag')).toBe(etag);
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    }
    const other = await get('accidentSummary', { 'if-none-match': '"other"' });
    expect(other.status).toBe(200);
    expect(other.body.accidentSummary).toBeDefined();
  });

  it('cover the map, its layers and the exports: the tag of the bytes sent', async () => {
    for (const name of ['map', 'map/layers', 'export/cells', 'export/crashes']) {
      const first = await fetch(`${t.url}${path(name)}`);
      const etag = first.headers.get('etag');
      expect(first.status, name).toBe(200);
      expect(etag, name).toMatch(/^"/);
      expect(first.headers.get('cache-control'), name).toBe('public, max-age=300');
      expect(first.headers.get('content-type'), name).not.toMatch(/^application\/json/);
      await first.arrayBuffer();
      const revalidated = await fetch(`${t.url}${path(name)}`, { headers: { 'if-none-match': etag! } });
      expect(revalidated.status, name).toBe(304);
    }
  });

  it('get a new tag once an ingest changes the answer: the old one is then answered in full', async () => {
    const before = await get('accidentSummary');
    const etag = before.headers.get('etag')!;
    const em = riskDb().orm.em.fork();
    await ingestFars(em, createReadStream(new URL('./fixtures/accident.csv', import.meta.url).pathname));
    await rebuildAggregates(em);
    const after = await get('accidentSummary', { 'if-none-match': etag });
    expect(after.status).toBe(200);
    expect(after.body.accidentSummary.total).toBe(before.body.accidentSummary.total + 1);
    expect(after.headers.get('etag')).toMatch(/^"/);
    expect(after.headers.get('etag')).not.toBe(etag);
  });
});

describe('a revalidation answered before any evaluation', () => {
  it('304 on a matching tag without resolving the area, looking up an answer or more SQL than reading the data version', async () => {
    const etag = (await get('riskInfo')).headers.get('etag')!;
    const before = work();
    const res = await get('riskInfo', { 'if-none-match': etag });
    expect(res.status).toBe(304);
    expect(res.headers.get('etag')).toBe(etag);
    const after = work();
    expect(after.areas).toBe(before.areas);
    expect(after.lookups).toBe(before.lookups);
    expect(after.statements - before.statements).toBeLessThanOrEqual(1);
  });

  it('another spelling of the area (keyword case, spacing) has the same tag; another radius, path or page another', async () => {
    const etag = (await get('farsInfo')).headers.get('etag')!;
    expect((await get('farsInfo', {}, { geometry: '  point(-87.674   41.8813) ', radius: '0.001' })).headers.get('etag')).toBe(etag);
    expect((await get('farsInfo', { 'if-none-match': etag }, { geometry: 'Point(-87.674 41.8813)', radius: '0.001' })).status).toBe(304);
    for (const params of [{ ...LOOP, radius: '0.0011' }, { ...LOOP, limit: '5' }, { geometry: 'POINT(-87.6741 41.8813)', radius: '0.001' }]) {
      expect((await get('farsInfo', {}, params)).headers.get('etag'), JSON.stringify(params)).not.toBe(etag);
    }
    expect((await get('riskInfo')).headers.get('etag')).not.toBe(etag);
  });

  it('an invalid request is never 304, whatever it names', async () => {
    const etag = (await get('riskInfo')).headers.get('etag')!;
    const res = await get('riskInfo', { 'if-none-match': etag }, { geometry: 'POINT(-87.674 41.8813)', radius: '-1' });
    expect(res.status).toBe(400);
  });
});

describe('the answer cache (GraphQL and REST)', () => {
  it('answers a repeated evaluation, in any spelling of the area, from memory: no SQL, no crash counting', async () => {
    const first = await riskInfoQuery('POINT(-87.6298 41.8781)', 0.004);
    expect(first.errors).toBeUndefined();
    const before = work();
    const inside = vi.spyOn(areaPoolFor(riskDb().orm.em), 'countInside');
    const again = await riskInfoQuery(' point(-87.6298  41.8781) ', 0.004);
    inside.mockRestore();
    expect(again.data).toEqual(first.data);
    expect(inside).not.toHaveBeenCalled();
    const after = work();
    expect(after.hits - before.hits).toBe(2);
    expect(after.statements - before.statements).toBeLessThanOrEqual(1);
  });

  it('never gives one area\'s answer for another: other radius, other point', async () => {
    const base = await riskInfoQuery('POINT(-87.6298 41.8781)', 0.01);
    const wider = await riskInfoQuery('POINT(-87.6298 41.8781)', 0.03);
    const elsewhere = await riskInfoQuery('POINT(-118.2437 34.0522)', 0.01);
    expect(wider.data.riskIndex.accidentSummary.total).toBeGreaterThan(base.data.riskIndex.accidentSummary.total);
    expect(elsewhere.data).not.toEqual(base.data);
    expect(await riskInfoQuery('POINT(-87.6298 41.8781)', 0.01)).toEqual(base);
  });

  it('counts its lookups and bytes on /metrics', async () => {
    await riskInfoQuery('POINT(-87.6298 41.8781)', 0.004);
    const text = await (await fetch(`${t.url}/metrics`)).text();
    const stats = answerCacheFor(riskDb().orm.em)!.stats();
    expect(stats.hits).toBeGreaterThan(0);
    expect(text).toContain(`gateway_risk_answer_cache_lookups{outcome="hit"} ${stats.hits}`);
    expect(text).toContain(`gateway_risk_answer_cache_lookups{outcome="miss"} ${stats.misses}`);
    expect(text).toContain(`gateway_risk_answer_cache_bytes ${stats.bytes}`);
  });

  it('never keeps real-time traffic', async () => {
    const query = '{ riskIndex(wkt: "POINT(-87.6298 41.8781)", radius: 0.01) { realtimeTraffic { source sensors } } }';
    await t.graphql(query);
    const before = work();
    expect((await t.graphql(query)).errors).toBeUndefined();
    expect(work().lookups).toBe(before.lookups);
  });
});

describe('answers never cached', () => {
  it('real-time traffic and /all (which holds it): no-store, no ETag, never 304', async () => {
    for (const name of ['realtimeTraffic', 'all']) {
      const res = await get(name, { 'if-none-match': '*' });
      expect(res.status, name).toBe(200);
      expect(res.headers.get('cache-control'), name).toBe('no-store');
      expect(res.headers.get('etag'), name).toBeNull();
    }
  });

  it('GraphQL POST: no ETag', async () => {
    const res = await t.request('POST', '/graphql', { body: { query: '{ riskIndex(wkt: "POINT(-87.674 41.8813)") { area { dataStatus } } }' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toBeNull();
  });
});

describe('from a browser app on an allowed origin', () => {
  it('a cross-origin conditional fetch: Vary: Origin, the tag exposed, and 304 on revalidation', async () => {
    const first = await fetch(`${t.url}${path('riskInfo')}`, { headers: { origin: APP } });
    expect(first.status).toBe(200);
    expect(first.headers.get('access-control-allow-origin')).toBe(APP);
    expect(first.headers.get('vary')).toMatch(/\bOrigin\b/i);
    expect(first.headers.get('access-control-expose-headers')).toMatch(/\bETag\b/i);
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    const revalidated = await fetch(`${t.url}${path('riskInfo')}`, { headers: { origin: APP, 'if-none-match': etag } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('access-control-allow-origin')).toBe(APP);
    expect(revalidated.headers.get('vary')).toMatch(/\bOrigin\b/i);
    expect(revalidated.headers.get('etag')).toBe(etag);
  });
});

describe('the data version', () => {
  it('a rebuild of the aggregates is a new version: new tags, and the answers evaluated again', async () => {
    const etag = (await get('historicalTraffic')).headers.get('etag')!;
    const cached = await riskInfoQuery('POINT(-87.6298 41.8781)', 0.004);
    await rebuildAggregates(riskDb().orm.em.fork());
    const before = work();
    const res = await get('historicalTraffic', { 'if-none-match': etag });
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toMatch(/^"/);
    expect(res.headers.get('etag')).not.toBe(etag);
    expect(await riskInfoQuery('POINT(-87.6298 41.8781)', 0.004)).toEqual(cached);
    const after = work();
    expect(after.misses - before.misses).toBe(3);
    expect(after.hits).toBe(before.hits);
  });

  it('the same tag after a restart: stored with the data, not made by the process', async () => {
    const etag = (await get('riskInfo')).headers.get('etag')!;
    await t.restart();
    await riskDataLoaded(riskDb().orm.em);
    const res = await get('riskInfo', { 'if-none-match': etag });
    expect(res.status).toBe(304);
    expect(res.headers.get('etag')).toBe(etag);
  });
});
