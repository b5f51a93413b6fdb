import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { startTestStack, TEST_HOP_KEY, type TestStack } from '../support/stack.ts';
import { startHiveGateway } from './hive.ts';
import { internalAuthorizer, type InternalAuthorizer } from './internal-authorization.ts';
import { scenarios, seed, type Measurement, type ScenarioContext, type Variant } from './scenarios.ts';
import type { MixedKind, MixedRequest } from './mixed.ts';
import { SupergraphInfo } from './schema.ts';
import { verify } from './verify.ts';

/**
 * The bench's Hive Gateway variant (hive.ts) on the test stack's subgraphs over HTTP: the bench's own
 * `user`, `cross`, REST-twin and Risk Index requests answer through Hive exactly as through our
 * gateway, which needs an internal token for the caller and every subgraph request's hop signed.
 */
describe('Hive Gateway bench variant', () => {
  let t: TestStack;
  let hive: Awaited<ReturnType<typeof startHiveGateway>>;
  let nodedup: Awaited<ReturnType<typeof startHiveGateway>>;
  let ctx: ScenarioContext;
  let authorize: InternalAuthorizer;

  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['scoring', 'booking', 'risk'], env: { SUBGRAPH_TRANSPORT: 'http' } });
    authorize = await internalAuthorizer(t.config);
    [hive, nodedup] = await Promise.all([
      startHiveGateway(t.stack.subgraphUrls, authorize, TEST_HOP_KEY), startHiveGateway(t.stack.subgraphUrls, authorize, TEST_HOP_KEY, { deduplicate: false }),
    ]);
    const base = {
      targets: { direct: t.stack.subgraphUrls, gateway: t.url, gatewayInprocess: t.url, stock: '', hive: hive.url, hiveNodedup: nodedup.url, bare: '' },
      subgraphs: ['scoring', 'booking', 'risk'], schema: new SupergraphInfo(), token: t.token,
    };
    ctx = { ...base, seed: await seed(base, 2) };
    // The Risk Index answers the same on both only once its crash data stopped loading.
    await riskDataLoaded(t.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
  });
  afterAll(async () => {
    await hive?.stop();
    await nodedup?.stop();
    await t?.close();
  });

  const measurement = (scenario: string, variant: Variant): Measurement => {
    const m = scenarios.find((s) => s.name === scenario)!.measurements(ctx).find((each) => each.variant === variant);
    if (!m) throw new Error(`no ${variant} measurement in ${scenario}`);
    return m;
  };
  const headers = (m: Measurement): Record<string, string> => ({ 'content-type': 'application/json', ...(m.auth ? { authorization: `Bearer ${t.token}` } : {}) });
  const answer = async (url: string, m: Measurement) =>
    (await fetch(url, { method: m.method, headers: headers(m), body: m.body })).json() as Promise<{ data: Record<string, Record<string, unknown> | null>; errors?: unknown[] }>;

  it.each([['user', 'hive'], ['user', 'hive-nodedup'], ['cross', 'hive'], ['rest', 'hive'], ['risk', 'hive']] as const)(
    '%s through %s: the same data as through our gateway',
    async (scenario, variant) => {
      expect(ctx.seed.problems).toEqual({});
      const m = measurement(scenario, variant);
      expect(m.compareWith).toBe(`${t.url}/graphql`);
      const [theirs, ours] = await Promise.all([answer(m.url, m), answer(m.compareWith!, m)]);
      // Data, not UNAUTHENTICATED errors: the subgraphs took Hive's signed hop and the internal token it sent.
      expect(theirs.errors).toBeUndefined();
      expect(Object.values(theirs.data).every((value) => value !== null)).toBe(true);
      expect(theirs.data).toEqual(ours.data);
      expect(await verify(m, headers)).toMatchObject({ problem: null });
    },
  );

  it('reports a Hive whose subgraph requests are not signed with the subgraphs\' key as failed, with the subgraphs\' refusal', async () => {
    const unsigned = await startHiveGateway(t.stack.subgraphUrls, authorize, 'another-internal-hop-key-0123456789abcdef');
    try {
      const m = { ...measurement('user', 'hive'), url: `${unsigned.url}/graphql` };
      const { problem } = await verify(m, headers);
      expect(problem).toBe('GraphQL error: Invalid internal hop signature');
    } finally {
      await unsigned.stop();
    }
  });

  it('compares every kind of request of a workload and a sample of its drawn ones, and reports the first difference with its kind', async () => {
    const user = measurement('user', 'hive');
    const cross = measurement('cross', 'hive');
    const request = (kind: MixedKind, m: Measurement): MixedRequest => ({ kind, method: 'POST', path: '/graphql', body: m.body });
    let drawn = 0;
    const workload: Measurement = {
      ...user, url: hive.url, compareWith: t.url, check: () => null,
      mix: { each: () => [request('user', user), request('cross', cross)], connection: () => () => { drawn += 1; return request('cross', cross); } },
    };
    expect(await verify(workload, headers)).toEqual({ problem: null });
    expect(drawn).toBeGreaterThanOrEqual(20);
    // A gateway that answers the user's ZIP differently stands in for ours.
    const ours = await answer(`${t.url}/graphql`, user);
    const altered = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ data: { user: { ...ours.data.user, homeZip: '00000' } } }));
    });
    await new Promise<void>((resolve) => altered.listen(0, '127.0.0.1', resolve));
    try {
      const { problem } = await verify({ ...workload, compareWith: `http://127.0.0.1:${(altered.address() as AddressInfo).port}` }, headers);
      expect(problem).toBe(`user: answer differs from our gateway's (ours vs theirs) at $.data.user.homeZip: "00000" vs "${ours.data.user?.homeZip}"`);
    } finally {
      altered.close();
    }
  });
});
