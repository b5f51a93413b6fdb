import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';
import { startBareServer } from './bare.ts';
import { crossQuery, scenarios, seed, type ScenarioContext } from './scenarios.ts';
import { SupergraphInfo } from './schema.ts';
import { verify } from './verify.ts';

/**
 * The bench's bare servers (bare.ts) on the test stack's database: the REST user lookup answers the
 * REST path's fields, and the cross query's twin answers exactly what our gateway answers, from
 * the same rows; anything but that one document is refused.
 */
describe('bare bench servers', () => {
  let t: TestStack;
  let bare: Awaited<ReturnType<typeof startBareServer>>;
  let ctx: ScenarioContext;
  let headers: Record<string, string>;

  beforeAll(async () => {
    t = await startTestStack({ subgraphs: ['scoring', 'booking'] });
    bare = await startBareServer(t.stack.subgraphs.find((s) => s.name === 'scoring')!.db, DEFAULT_CLIENT.org, t.config.DATABASE_URL);
    const base = {
      targets: { direct: t.stack.subgraphUrls, gateway: t.url, gatewayInprocess: t.url, stock: '', hive: '', hiveNodedup: '', bare: bare.url },
      subgraphs: ['scoring', 'booking'], schema: new SupergraphInfo(), token: t.token,
    };
    ctx = { ...base, seed: await seed(base, 3) };
    headers = { 'content-type': 'application/json', authorization: `Bearer ${t.token}` };
  });
  afterAll(async () => {
    await bare?.stop();
    await t?.close();
  });

  const measurement = (scenario: string, variant: string) => scenarios.find((s) => s.name === scenario)!.measurements(ctx).find((m) => m.variant === variant)!;

  it('the cross twin answers exactly what our gateway answers, in two statements', async () => {
    expect(ctx.seed.problems).toEqual({});
    const twin = measurement('cross', 'bare-twin');
    expect(twin.compareWith).toBe(`${t.url}/graphql`);
    bare.statements.reset();
    expect(await verify(twin, () => headers)).toEqual({ problem: null });
    expect(bare.statements.count).toBe(2);
    const body = await (await fetch(twin.url, { method: 'POST', headers, body: twin.body })).json() as { data: { user: { bookings: { nodes: unknown[] } } } };
    expect(body.data.user.bookings.nodes).toHaveLength(3);
  });

  it('the cross twin refuses any other document, and answers null for an unknown user', async () => {
    const other = await fetch(`${bare.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: crossQuery('id '), variables: { id: ctx.seed.userId } }) });
    expect(other.status).toBe(400);
    const unknown = await fetch(`${bare.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query: crossQuery(''), variables: { id: 'nobody' } }) });
    expect(await unknown.json()).toEqual({ data: { user: null } });
  });

  it('the user lookup answers the REST path fields', async () => {
    expect(await verify(measurement('cross', 'bare'), () => headers)).toEqual({ problem: null });
  });
});
