/**
 * HTTP caching of the public Risk Index answers: a strong ETag of the answer's bytes with
 * `Cache-Control: public, max-age=300`, 304 on If-None-Match (weak comparison, `*`), a new tag once an
 * ingest changes the answer, never for real-time traffic; Vary: Origin under CORS. (An answer while
 * the data load: test/risk/first-answer.test.ts.)
 */
import { createReadStream } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rebuildAggregates } from '../../subgraphs/risk/data/aggregate.ts';
import { ingestFars } from '../../subgraphs/risk/data/fars.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/load.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const APP = 'https://app.example.com';
const LOOP = { geometry: 'POINT(-87.674 41.8813)', radius: '0.001' };
let t: TestStack;

const path = (name: string, params: Record<string, string> = LOOP) => `/riskIndex/v1/${name}?${new URLSearchParams(params)}`;
const get = (name: string, headers: Record<string, string> = {}, params?: Record<string, string>) => t.request('GET', path(name, params), { headers });
const riskDb = () => t.stack.subgraphs.find((s) => s.name === 'risk')!.db;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['risk'], env: { CORS_ORIGINS: APP } });
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
