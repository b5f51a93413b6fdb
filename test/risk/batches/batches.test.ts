/**
 * Batch scoring through the gateway, as an analyst's tools read it: a GeoJSON validator and csv-parse
 * on the results, REST and GraphQL, another organisation's job, a cancellation racing completion,
 * formula cells, a body past 5 MB and bad rows.
 */
import { getIssues } from '@placemarkio/check-geojson';
import { parse } from 'csv-parse/sync';
import type { FeatureCollection } from 'geojson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riskDataLoaded } from '../../../subgraphs/risk/data/status.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { pollerWindow } from '../../support/idle-poller.ts';
import { BATCHES, box, featureCollection, polygon, submit, waitFor, type Batch } from './support.ts';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['risk'], env: { RISK_BATCH_POLL_MS: '50', RISK_BATCH_DUTY_PERCENT: '100' } });
  await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
}, 600_000);
afterAll(async () => {
  expect(t.contract.violations).toEqual([]);
  await t?.close();
});

const CHICAGO = polygon(-87.95, 41.7, -87.68, 42.0);
const LOOP = { type: 'Point', coordinates: [-87.6298, 41.8781] };
type Row = { id: string; index: number | null; crashes: number | null; fatalities: number | null; areaKm2: number | null; error: string | null };

describe('a GeoJSON batch', () => {
  it('scores every row as riskInfo does, reports bad rows in place, and its result is valid RFC 7946', async () => {
    const input = featureCollection([
      { id: 'chicago', geometry: CHICAGO },
      { id: 7, geometry: LOOP, radius: 0.02 },
      { id: 'no-geometry', geometry: null },
      { geometry: LOOP },
      { id: 'self-crossing', geometry: { type: 'Polygon', coordinates: [[[-87.9, 41.7], [-87.7, 42.0], [-87.7, 41.7], [-87.9, 42.0], [-87.9, 41.7]]] } },
      { id: 'bad-radius', geometry: LOOP, radius: 'wide' },
      { id: 'las-vegas', geometry: { type: 'Point', coordinates: [-115.14, 36.17] } },
    ]);
    const res = await submit(t, input, 'application/geo+json');
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'QUEUED', total: 7, processed: 0 });
    expect(res.headers.get('location')).toBe(`${BATCHES}/${res.body.id}`);
    const done = await waitFor(t, res.body.id);
    expect(done).toMatchObject({ status: 'SUCCEEDED', total: 7, processed: 7, progress: 1, failedRows: 4, error: null });

    const file = await t.request('GET', `${BATCHES}/${res.body.id}/result`, { token: t.token, headers: { accept: 'application/geo+json' } });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('application/geo+json');
    expect(getIssues(JSON.stringify(file.body))).toEqual([]);
    const rows = (file.body as FeatureCollection<null, Row>).features.map((f) => f.properties);
    expect(rows.map((r) => r.id)).toEqual(['chicago', '7', 'no-geometry', '', 'self-crossing', 'bad-radius', 'las-vegas']);
    for (const [i, [wkt, radius]] of [[box(-87.95, 41.7, -87.68, 42.0), null], ['POINT(-87.6298 41.8781)', 0.02]].entries()) {
      const info = (await t.request('GET', `/riskIndex/v1/riskInfo?${new URLSearchParams({ geometry: String(wkt), ...(radius ? { radius: String(radius) } : {}) })}`)).body.riskInfo;
      expect(rows[i]).toEqual({ id: rows[i].id, index: info.index, crashes: info.fatalCrashes, fatalities: info.fatalities, areaKm2: info.areaKm2, error: null });
      expect(info.fatalCrashes).toBeGreaterThan(0);
    }
    expect(rows[2].error).toMatch(/geometry is missing/);
    expect(rows[3].error).toMatch(/id is required/);
    expect(rows[4].error).toMatch(/^BAD_USER_INPUT: .*self/i);
    expect(rows[5].error).toMatch(/radius must be a number/);
    expect(rows[6]).toMatchObject({ index: null, crashes: 0, fatalities: 0, areaKm2: 0, error: null });
  }, 300_000);
});

describe('a CSV batch', () => {
  it('reads id,wkt,radius and writes a CSV whose formula-like text is neutralised', async () => {
    const ids = ['=cmd|\' /C calc\'!A0', '+1+1', '-2+3', '@SUM(1+1)', '\t=1+1', '\r=1+1', 'plain, "quoted"'];
    const csv = ['id,wkt,radius', ...ids.map((id) => `"${id.replace(/"/g, '""')}","POINT(-87.6298 41.8781)",0.01`), 'short-row,POINT(-87.6 41.8)'].join('\r\n');
    const res = await submit(t, csv, 'text/csv');
    expect(res.status).toBe(202);
    await waitFor(t, res.body.id);
    const file = await t.request('GET', `${BATCHES}/${res.body.id}/result?format=csv`, { token: t.token });
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toMatch(/^text\/csv/);
    const rows = parse(file.body as string, { columns: true, record_delimiter: '\r\n' }) as Record<string, string>[];
    expect(Object.keys(rows[0])).toEqual(['id', 'index', 'crashes', 'fatalities', 'areaKm2', 'error']);
    expect(rows.map((r) => r.id)).toEqual([...ids.slice(0, 6).map((id) => `'${id}`), ids[6], 'short-row']);
    for (const r of rows.slice(0, 7)) expect(r).toMatchObject({ error: '' });
    expect(new Set(rows.slice(0, 7).map((r) => r.index)).size).toBe(1);
    expect(Number(rows[0].areaKm2)).toBeGreaterThan(1);
    expect(rows[7].error).toMatch(/2 fields, the header 3/);
  });

  it('refuses a wrong header, a body past 5 MB and more than 10,000 rows before storing anything', async () => {
    expect((await submit(t, 'name,geometry\na,POINT(1 2)', 'text/csv')).body.detail).toMatch(/header must be id,wkt,radius/);
    const big = `id,wkt,radius\r\n${'a,"POINT(-87.6 41.8)",\r\n'.repeat(Math.ceil((5 * 1024 * 1024 + 2048) / 24))}`;
    const tooBig = await submit(t, big, 'text/csv');
    expect(tooBig.status).toBe(413);
    const many = await submit(t, `id,wkt\r\n${'a,POINT(-87.6 41.8)\r\n'.repeat(10_001)}`, 'text/csv');
    expect(many.status).toBe(400);
    expect(many.body.detail).toMatch(/at most 10000 rows; got 10001/);
    expect((await submit(t, 'hello', 'text/plain')).status).toBe(415);
    expect((await submit(t, '{"type":"Feature"}', 'application/geo+json')).status).toBe(400);
  }, 300_000);
});

describe('who may see a job', () => {
  it('needs a b2b token, and another organisation\'s job is 404 on every path and null in GraphQL', async () => {
    const input = featureCollection([{ id: 'a', geometry: LOOP }]);
    expect((await submit(t, input, 'application/geo+json', null as never)).status).toBe(401);
    const roadside = await t.clientFor('org-a', ['roadside']);
    expect((await submit(t, input, 'application/geo+json', roadside.token)).status).toBe(403);
    const mine = await submit(t, input, 'application/geo+json');
    expect(mine.status).toBe(202);
    await waitFor(t, mine.body.id);
    const other = await t.clientFor('org-b');
    for (const [method, path] of [['GET', ''], ['GET', '/result'], ['DELETE', '']]) {
      const res = await t.request(method, `${BATCHES}/${mine.body.id}${path}`, { token: other.token });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    expect((await t.request('GET', `${BATCHES}/not-a-uuid`, { token: t.token })).status).toBe(404);
    const gql = await t.graphql('query($id: ID!) { riskBatch(id: $id) { id } }', { id: mine.body.id }, other.token);
    expect(gql.data).toEqual({ riskBatch: null });
    const cancel = await t.graphql('mutation($id: ID!) { cancelRiskBatch(id: $id) { id } }', { id: mine.body.id }, other.token);
    expect(cancel.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  }, 300_000);
});

describe('GraphQL', () => {
  it('submits, polls and reads the result as CSV', async () => {
    const csv = 'id,wkt,radius\nloop,POINT(-87.6298 41.8781),0.02\n';
    const sent = await t.graphql<{ submitRiskBatch: Batch }>('mutation($input: RiskBatchInput!) { submitRiskBatch(input: $input) { id status total } }',
      { input: { format: 'CSV', content: csv } });
    expect(sent.data?.submitRiskBatch).toMatchObject({ status: 'QUEUED', total: 1 });
    await waitFor(t, sent.data!.submitRiskBatch.id);
    const read = await t.graphql('query($id: ID!) { riskBatch(id: $id) { status progress result(format: CSV) { mediaType filename content } } }', { id: sent.data!.submitRiskBatch.id });
    expect(read.data.riskBatch).toMatchObject({ status: 'SUCCEEDED', progress: 1, result: { mediaType: 'text/csv; charset=utf-8; header=present' } });
    const [row] = parse(read.data.riskBatch.result.content, { columns: true }) as Record<string, string>[];
    expect(row).toMatchObject({ id: 'loop', error: '' });
    expect(Number(row.index)).toBeGreaterThan(0);
  }, 300_000);
});

describe('cancelling', () => {
  it('races completion: either the cancellation wins (200, CANCELLED) or the job finished first (409, SUCCEEDED), never both', async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 8; i += 1) {
      const res = await submit(t, featureCollection([{ id: 'a', geometry: LOOP }, { id: 'b', geometry: CHICAGO }]), 'application/geo+json');
      await new Promise((r) => setTimeout(r, i * 40));
      const cancel = await t.request<Batch>('DELETE', `${BATCHES}/${res.body.id}`, { token: t.token });
      const final = await waitFor(t, res.body.id);
      if (cancel.status === 200) {
        expect(final.status).toBe('CANCELLED');
        expect(cancel.body.status).toBe('CANCELLED');
      } else {
        expect(cancel.status).toBe(409);
        expect(final.status).toBe('SUCCEEDED');
      }
      const file = await t.request('GET', `${BATCHES}/${res.body.id}/result`, { token: t.token });
      const rows = (file.body as FeatureCollection<null, Row>).features.map((f) => f.properties);
      expect(rows).toHaveLength(2);
      if (final.status === 'CANCELLED') for (const r of rows) expect(r.error === null || r.error === 'not scored: the batch was cancelled').toBe(true);
      else expect(rows.every((r) => r.error === null)).toBe(true);
      outcomes.push(final.status);
      // Cancelling again: a cancelled job as it is, a finished one 409.
      expect((await t.request('DELETE', `${BATCHES}/${res.body.id}`, { token: t.token })).status).toBe(final.status === 'CANCELLED' ? 200 : 409);
    }
    expect(outcomes).toContain('CANCELLED');
  }, 300_000);

  it('answers 409 for the result of a job that has not finished, and keeps at most 5 queued jobs per client', async () => {
    const client = await t.clientFor('org-c');
    const rows = featureCollection(Array.from({ length: 400 }, (_, i) => ({ id: i, geometry: polygon(-88 + i * 1e-4, 41.7, -87.6, 42) })));
    const answers: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 7; i += 1) {
      const res = await submit(t, rows, 'application/geo+json', client.token);
      answers.push(res.status);
      if (res.status === 202) ids.push(res.body.id);
      else expect(res.body).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    }
    expect(answers.filter((s) => s === 202).length).toBeLessThanOrEqual(6);
    expect(answers).toContain(429);
    const early = await t.request('GET', `${BATCHES}/${ids[0]}/result`, { token: client.token });
    expect(early.status).toBe(409);
    for (const id of ids) expect((await t.request('DELETE', `${BATCHES}/${id}`, { token: client.token })).status).toBe(200);
  }, 300_000);
});

describe('an idle runner', () => {
  // A cancelled job's last chunk may still be scoring and committing: the first 300 ms (six polls at
  // RISK_BATCH_POLL_MS 50) in which the runner did nothing but look for jobs.
  it('looks for a job with one statement a poll: no transaction', async () => {
    const connection = t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em.getConnection();
    const isProbe = (sql: string) => sql.startsWith('select exists') && sql.includes('"risk"."risk_batches"');
    const isClaim = (sql: string) => sql.includes('skip locked') || sql.includes('advisory');
    const window = await pollerWindow(connection, isProbe, isClaim);
    expect(window.work).toEqual([]);
    expect(window.began).toBe(false);
  });
});
