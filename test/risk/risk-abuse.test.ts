import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { zigzag } from '../support/zigzag.ts';

/** Issue 12's reproduction: x alternating -124 / -114, y stepping 0.0018 from 33. */
const CORRIDOR = 'LINESTRING(-87.6766 41.8813, -87.6718 41.8814)';
const QUERY = 'query Risk($wkt: WKT!, $radius: Float) { riskIndex(wkt: $wkt, radius: $radius) { area { cellsTouched } riskInfo { index } } }';

const riskInfo = (t: TestStack, wkt: string, radius: number) =>
  t.request('GET', `/riskIndex/v1/riskInfo?${new URLSearchParams({ geometry: wkt, radius: String(radius) })}`);

/** The request, and /healthz sent while it runs: both answers. */
async function withHealth<T>(t: TestStack, work: () => Promise<T>) {
  const pending = work();
  await new Promise((resolve) => setTimeout(resolve, 20));
  const health = await t.request('GET', '/healthz');
  return { result: await pending, health };
}

describe('Risk Index cost: refused before the work (budget)', () => {
  let t: TestStack;
  beforeAll(async () => { t = await startTestStack({ subgraphs: ['risk'] }); });
  afterAll(async () => { await t?.close(); });

  it('REST: the 600-position zig-zag with radius 5 is a 422 naming the limit; /healthz answers meanwhile', async () => {
    const { result, health } = await withHealth(t, () => riskInfo(t, zigzag(600), 5));
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    expect(result.status).toBe(422);
    expect(result.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(result.body).toMatchObject({ status: 422, code: 'GEOMETRY_TOO_COMPLEX', limit: 'bufferedVertices', max: 200_000 });
    expect(result.body.got).toBeGreaterThan(200_000);
    expect(result.body.detail).toMatch(/limit: bufferedVertices, max 200000, got \d+/);
  });

  it('GraphQL: the 5,000-position zig-zag is refused with the code and the limit; /healthz answers meanwhile', async () => {
    const { result, health } = await withHealth(t, () => t.graphql(QUERY, { wkt: zigzag(5000), radius: 5 }, null));
    expect(health.status).toBe(200);
    expect(result.data?.riskIndex ?? null).toBeNull();
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'GEOMETRY_TOO_COMPLEX', limit: 'bufferedVertices', max: 200_000 });
    expect(result.errors?.[0].message).toMatch(/limit: bufferedVertices/);
  });

  it('GraphQL: more positions than allowed is refused on the vertex count', async () => {
    const result = await t.graphql(QUERY, { wkt: zigzag(5600), radius: 0.01 }, null);
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'GEOMETRY_TOO_COMPLEX', limit: 'vertices', max: 5000, got: 5600 });
    expect(result.errors?.[0].message).toMatch(/limit: vertices, max 5000, got 5600/);
  });

  it('an ordinary corridor still answers, through both', async () => {
    const rest = await riskInfo(t, CORRIDOR, 0.002);
    expect(rest.status).toBe(200);
    expect(rest.body.area.cellsTouched).toBeGreaterThan(0);
    const gql = await t.graphql(QUERY, { wkt: CORRIDOR, radius: 0.002 }, null);
    expect(gql.errors).toBeUndefined();
    expect(gql.data.riskIndex.area.cellsTouched).toBe(rest.body.area.cellsTouched);
  });
});

describe('Risk Index cost: a task over its time limit is ended (no budget in the way)', () => {
  let t: TestStack;
  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['risk'], env: { RISK_MAX_BUFFERED_VERTICES: '1000000000', RISK_TASK_TIMEOUT_MS: '3000', RISK_WORKERS: '1' } });
  });
  afterAll(async () => { await t?.close(); });

  it('REST: the zig-zag runs into the time limit, answers 422 timeMs; /healthz answers meanwhile; the next area answers', async () => {
    const { result, health } = await withHealth(t, () => riskInfo(t, zigzag(600), 5));
    expect(health.status).toBe(200);
    expect(result.status).toBe(422);
    expect(result.body).toMatchObject({ code: 'GEOMETRY_TOO_COMPLEX', limit: 'timeMs', max: 3000 });
    const next = await riskInfo(t, CORRIDOR, 0.002);
    expect(next.status).toBe(200);
    expect(next.body.riskInfo.index).toEqual(expect.any(Number));
  });

  it('GraphQL: the 5,000-position zig-zag is ended too, and the process lives on', async () => {
    const { result, health } = await withHealth(t, () => t.graphql(QUERY, { wkt: zigzag(5000), radius: 5 }, null));
    expect(health.status).toBe(200);
    expect(result.errors?.[0].extensions).toMatchObject({ code: 'GEOMETRY_TOO_COMPLEX', limit: expect.stringMatching(/^(timeMs|heapMb)$/) });
    const next = await t.graphql(QUERY, { wkt: CORRIDOR, radius: 0.002 }, null);
    expect(next.errors).toBeUndefined();
    expect(next.data.riskIndex.area.cellsTouched).toBeGreaterThan(0);
  });
});
