/**
 * 10,000 rows of the largest areas a request may ask for: the job is held to its total budget and
 * ends (FAILED, its unscored rows saying why) in bounded time, while the interactive Risk Index answers.
 */
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { riskDataLoaded } from '../../../subgraphs/risk/data/status.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { BATCHES, box, submit, waitFor } from './support.ts';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['risk'], env: { RISK_BATCH_POLL_MS: '50', RISK_BATCH_MAX_JOB_SECONDS: '3' } });
  await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
}, 600_000);
afterAll(async () => {
  expect(t.contract.violations).toEqual([]);
  await t?.close();
});

it('bounds 10,000 rows of maximal polygons by the job\'s total budget', async () => {
  // Every row a whole-state box, each a little different (no cache serves it): at the search area budget's edge.
  const lines = Array.from({ length: 10_000 }, (_, i) => `r${i},"${box(-124.5 + i * 1e-6, 32.5, -114, 42)}",`);
  const started = Date.now();
  const res = await submit(t, ['id,wkt,radius', ...lines].join('\n'), 'text/csv');
  expect(res.status).toBe(202);
  expect(Date.now() - started).toBeLessThan(15_000);
  const probe = await t.request('GET', `/riskIndex/v1/riskInfo?geometry=${encodeURIComponent('POINT(-87.6298 41.8781)')}&radius=0.01`);
  expect(probe.status).toBe(200);
  const done = await waitFor(t, res.body.id, undefined, 60_000);
  expect(done.status).toBe('FAILED');
  expect(done.error).toMatch(/total budget of 3 s/);
  expect(done.processed).toBeGreaterThan(0);
  expect(done.processed).toBeLessThan(10_000);
  expect(Date.now() - started).toBeLessThan(60_000);
  const file = await t.request('GET', `${BATCHES}/${res.body.id}/result`, { token: t.token, headers: { accept: 'text/csv' } });
  const rows = parse(file.body as string, { columns: true }) as Record<string, string>[];
  expect(rows).toHaveLength(10_000);
  expect(rows.filter((r) => r.error === '')).toHaveLength(done.processed - done.failedRows);
  expect(rows.at(-1)!.error).toMatch(/^not scored: the batch failed \(the job passed its total budget/);
}, 300_000);
