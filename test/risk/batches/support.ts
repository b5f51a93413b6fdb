import { expect } from 'vitest';
import type { TestStack } from '../../support/stack.ts';

export const BATCHES = '/riskIndex/v1/batches';
export const box = (w: number, s: number, e: number, n: number) => `POLYGON((${w} ${s}, ${e} ${s}, ${e} ${n}, ${w} ${n}, ${w} ${s}))`;

export interface Batch { id: string; status: string; total: number; processed: number; progress: number; failedRows: number; error: string | null }

/** POSTs a batch's text with its media type. */
export const submit = (t: TestStack, content: string, type: string, token = t.token) =>
  t.request<Batch & { detail?: string }>('POST', BATCHES, { body: content, headers: { 'content-type': type }, token });

/** Polls the job until it has finished (or `until` holds), failing after `timeoutMs`. */
export async function waitFor(t: TestStack, id: string, until = (b: Batch) => ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(b.status), timeoutMs = 120_000) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.request<Batch>('GET', `${BATCHES}/${id}`, { token: t.token });
    expect(res.status).toBe(200);
    if (until(res.body)) return res.body;
    if (Date.now() > end) throw new Error(`batch ${id} still ${res.body.status} (${res.body.processed}/${res.body.total})`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A FeatureCollection of rows: [id, WKT-less GeoJSON geometry, radius?]. */
export const featureCollection = (rows: { id?: unknown; geometry: unknown; radius?: unknown }[]) => JSON.stringify({
  type: 'FeatureCollection',
  features: rows.map(({ id, geometry, radius }) => ({ type: 'Feature', geometry, properties: { ...(id === undefined ? {} : { id }), ...(radius === undefined ? {} : { radius }) } })),
});

export const polygon = (w: number, s: number, e: number, n: number) => ({ type: 'Polygon', coordinates: [[[w, s], [e, s], [e, n], [w, n], [w, s]]] });
