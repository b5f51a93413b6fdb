import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { buildSubgraph, type Subgraph } from '../../subgraphs/platform/subgraph.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const VIN = '1HGCM82633A004352';
let t: TestStack;
let replacement: Subgraph | undefined;

// Subgraphs that listen (compose, <NAME>_URL): the HTTP transport, opted into here.
beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring', 'booking'], env: { SUBGRAPH_TRANSPORT: 'http' } }); });
afterAll(async () => {
  await replacement?.close();
  await t?.close();
});

describe('a listening subgraph goes down and comes back', () => {
  it('answers the other subgraphs\' fields with partial data, 503 on its REST paths, and recovers without a restart', async () => {
    await t.request('POST', '/shared-mobility-insights/v2/users', { token: t.token, body: { userId: 'partial-1' } });
    const query = `{ user(userId: "partial-1") { userId } vehicle(vin: "${VIN}") { vin } }`;
    const healthy = await t.graphql(query);
    expect(healthy.errors).toBeUndefined();

    const booking = t.stack.subgraphs.find((s) => s.name === 'booking')!;
    const port = Number(new URL(t.stack.subgraphUrls.booking).port);
    await booking.app.close();

    const partial = await t.graphql(query);
    expect(partial.data?.user).toEqual({ userId: 'partial-1' });
    expect(partial.data?.vehicle ?? null).toBeNull();
    expect(partial.errors?.length).toBeGreaterThan(0);
    expect(partial.errors?.[0].message).toMatch(/booking/);
    expect(partial.errors?.[0].extensions?.code).toBe('SERVICE_UNAVAILABLE');

    const rest = await t.request('POST', '/shared-mobility-insights/v2/vehicles', { token: t.token, body: { VIN } });
    expect(rest.status).toBe(503);
    expect(rest.headers.get('content-type')).toMatch(/problem\+json/);
    expect(rest.body.code).toBe('SERVICE_UNAVAILABLE');
    const otherArea = await t.request('GET', '/shared-mobility-insights/v2/users/partial-1', { token: t.token });
    expect(otherArea.status).toBe(200);
    const notReady = await t.request('GET', '/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body.checks).toMatchObject({ booking: false, scoring: true });

    await booking.db.close();
    replacement = await buildSubgraph(subgraphDefinitions.booking, t.config);
    await replacement.app.listen({ host: '127.0.0.1', port });
    const recovered = await t.request('POST', '/shared-mobility-insights/v2/vehicles', { token: t.token, body: { VIN } });
    expect(recovered.status).toBe(201);
    const whole = await t.graphql(query);
    expect(whole.errors).toBeUndefined();
    expect(whole.data?.vehicle).toEqual({ vin: VIN });
    expect((await t.request('GET', '/readyz')).body.checks).toMatchObject({ booking: true, scoring: true });
  });
});
