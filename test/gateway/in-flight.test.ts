import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { zigzag } from '../support/zigzag.ts';

const CORRIDOR = 'LINESTRING(-87.6766 41.8813, -87.6718 41.8814)';
const QUERY = 'query Risk($wkt: WKT!) { riskIndex(wkt: $wkt, radius: 0.002) { area { cellsTouched } } }';
const riskInfo = (wkt: string, radius: number) => `/riskIndex/v1/riskInfo?${new URLSearchParams({ geometry: wkt, radius: String(radius) })}`;

/**
 * Issue 20, item 8: a process-wide bound of in-flight Risk Index evaluations, checked before any
 * work. Two zig-zags under the geometry budget keep the two geometry threads busy for seconds and so
 * hold both slots; meanwhile every other Risk Index request is refused at once, /healthz answers.
 */
describe('Risk Index: in-flight bound (RISK_MAX_IN_FLIGHT)', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['risk'], env: { RISK_MAX_IN_FLIGHT: '2', RISK_WORKERS: '2', RISK_TASK_TIMEOUT_MS: '4000' } });
    await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
  });
  afterAll(async () => { await t?.close(); });

  it('refuses REST and GraphQL Risk Index requests over the bound with 503 and Retry-After, answers /healthz meanwhile, and frees the bound after', async () => {
    const etag = (await t.request('GET', riskInfo(CORRIDOR, 0.002))).headers.get('etag')!;
    // Distinct areas (resolved areas are cached): each holds a slot until its geometry task ends.
    let settled = 0;
    const holders = [zigzag(80), zigzag(81)].map((wkt) => t.request('GET', riskInfo(wkt, 5)).finally(() => { settled += 1; }));

    // The holders are admitted in turn; the first refusal comes once both hold their slot.
    let refused = await t.request('GET', riskInfo(CORRIDOR, 0.002));
    for (let i = 0; i < 40 && refused.status !== 503; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      refused = await t.request('GET', riskInfo(CORRIDOR, 0.002));
    }
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.body).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', detail: expect.stringMatching(/Risk Index/) });

    const gql = await t.request('POST', '/graphql', { body: { query: QUERY, variables: { wkt: CORRIDOR } } });
    expect(gql.status).toBe(503);
    expect(Number(gql.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(gql.body.data ?? null).toBeNull();
    expect(gql.body.errors[0].extensions).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });

    const map = await t.request('GET', `/riskIndex/v1/map?${new URLSearchParams({ geometry: CORRIDOR })}`);
    expect(map.status).toBe(503);
    expect(map.headers.get('retry-after')).not.toBeNull();
    // The OGC API reads through the same paths: refused alike.
    const ogc = await fetch(`${t.url}/riskIndex/v1/ogc/collections/crashes/items?bbox=-87.7,41.85,-87.6,41.92`);
    expect(ogc.status).toBe(503);
    expect(Number(ogc.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const health = await t.request('GET', '/healthz');
    expect(health.status).toBe(200);
    // A revalidation of a current tag needs no evaluation: 304 meanwhile; any other tag is refused as before.
    expect((await t.request('GET', riskInfo(CORRIDOR, 0.002), { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await t.request('GET', riskInfo(CORRIDOR, 0.002), { headers: { 'if-none-match': '"stale"' } })).status).toBe(503);
    // Every refusal came while the holders still ran: refused before the work, not after waiting.
    expect(settled).toBe(0);

    const held = await Promise.all(holders);
    // Admitted: each ends as its geometry does (an answer, or the time limit), never refused by the bound.
    for (const res of held) expect(res.body.detail ?? '').not.toMatch(/evaluations running/);
    const after = await t.request('GET', riskInfo(CORRIDOR, 0.002));
    expect(after.status).toBe(200);
    const afterGql = await t.graphql(QUERY, { wkt: CORRIDOR }, null);
    expect(afterGql.errors).toBeUndefined();
    expect(afterGql.data.riskIndex.area.cellsTouched).toBeGreaterThan(0);
  }, 60_000);

  it('counts each aliased riskIndex of one operation: more than the bound in one operation is a 400', async () => {
    const query = `{ ${['a', 'b', 'c'].map((alias) => `${alias}: riskIndex(wkt: "${CORRIDOR}") { area { cellsTouched } }`).join(' ')} }`;
    const res = await t.request('POST', '/graphql', { body: { query } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect(res.body.errors[0].message).toMatch(/at most 2 riskIndex/);
    const two = await t.request('POST', '/graphql', { body: { query: `{ ${['a', 'b'].map((alias) => `${alias}: riskIndex(wkt: "${CORRIDOR}") { area { cellsTouched } }`).join(' ')} }` } });
    expect(two.status).toBe(200);
    expect(two.body.errors).toBeUndefined();
  });
});
