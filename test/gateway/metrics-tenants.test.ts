/**
 * Operation-name labels no tenant can spoil: a client's names take at most its own 20 slots (500 in
 * all), so one client sending 300 junk names leaves another client's new name labelled. Read with a
 * Prometheus text-format parser, as test/multiproc/metrics.test.ts reads them.
 */
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_OPERATION_NAMES_PER_CLIENT } from '../../gateway/observability/metrics.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const OPERATIONS = 'gateway_graphql_operations_total';

let t: TestStack;
beforeAll(async () => { t = await startTestStack({ subgraphs: ['scoring'] }); });
afterAll(async () => { await t?.close(); });

/** operation_name -> count of successful GraphQL operations over /graphql. */
async function labelled(): Promise<Map<string, number>> {
  const res = await fetch(`${t.url}/metrics`);
  expect(res.status).toBe(200);
  const family = parsePrometheusTextFormat(await res.text()).find((f) => f.name === OPERATIONS);
  const counts = new Map<string, number>();
  for (const m of family?.metrics ?? []) {
    if (m.labels?.transport !== 'graphql' || m.labels.outcome !== 'success') continue;
    counts.set(m.labels.operation_name!, (counts.get(m.labels.operation_name!) ?? 0) + Number(m.value));
  }
  return counts;
}

describe('operation-name labels per client', () => {
  it('one client sending 300 junk names does not stop another client\'s new operation name from being labelled', async () => {
    const junk = await t.clientFor('org-junk');
    const fleet = await t.clientFor('org-fleet');
    const junkNames = Array.from({ length: 300 }, (_, i) => `Junk${i}`);
    await Promise.all(Array.from({ length: 4 }, async (_, lane) => {
      for (let i = lane; i < junkNames.length; i += 4) expect((await t.graphql(`query ${junkNames[i]} { __typename }`, {}, junk.token)).status).toBe(200);
    }));
    expect((await t.graphql('query FleetDashboard { __typename }', {}, fleet.token)).data).toEqual({ __typename: 'Query' });
    expect((await t.graphql('query FleetDashboard { __typename }', {}, fleet.token)).data).toEqual({ __typename: 'Query' });

    const counts = await labelled();
    expect(counts.get('FleetDashboard')).toBe(2);
    const junkLabelled = junkNames.filter((n) => counts.has(n));
    expect(junkLabelled).toHaveLength(MAX_OPERATION_NAMES_PER_CLIENT);
    expect(counts.get('(other)')).toBe(300 - MAX_OPERATION_NAMES_PER_CLIENT);
  }, 120_000);
});
