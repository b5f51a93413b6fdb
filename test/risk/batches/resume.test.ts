/** A job survives a restart: the new process resumes it after its last committed chunk, and every row is scored once. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FeatureCollection } from 'geojson';
import { riskDataLoaded } from '../../../subgraphs/risk/data/status.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { BATCHES, featureCollection, submit, waitFor } from './support.ts';

let t: TestStack;
const loaded = () => riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['risk'], persistent: true, env: { RISK_BATCH_POLL_MS: '50', RISK_BATCH_DUTY_PERCENT: '25' } });
  await loaded();
}, 600_000);
afterAll(async () => { await t?.close(); });

it('resumes a running job after a restart, keeping what was committed', async () => {
  const rows = Array.from({ length: 300 }, (_, i) => ({ id: `p${i}`, geometry: { type: 'Point', coordinates: [-87.9 + (i % 30) * 0.01, 41.75 + Math.floor(i / 30) * 0.02] }, radius: 0.01 }));
  const res = await submit(t, featureCollection(rows), 'application/geo+json');
  expect(res.status).toBe(202);
  const before = await waitFor(t, res.body.id, (b) => b.processed >= 50, 120_000);
  expect(before.status).toBe('RUNNING');
  expect(before.processed).toBeLessThan(300);
  await t.restart();
  await loaded();
  const after = await t.request('GET', `${BATCHES}/${res.body.id}`, { token: t.token });
  expect(after.body.processed).toBeGreaterThanOrEqual(before.processed);
  const done = await waitFor(t, res.body.id, undefined, 300_000);
  expect(done).toMatchObject({ status: 'SUCCEEDED', processed: 300, failedRows: 0 });
  const file = await t.request('GET', `${BATCHES}/${res.body.id}/result`, { token: t.token });
  const out = (file.body as FeatureCollection<null, { id: string; error: string | null; areaKm2: number }>).features.map((f) => f.properties);
  expect(out.map((r) => r.id)).toEqual(rows.map((r) => r.id));
  expect(out.every((r) => r.error === null && r.areaKm2 > 0)).toBe(true);
}, 600_000);
