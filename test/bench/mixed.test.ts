import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../../subgraphs/platform/random.ts';
import { DEFAULT_CLIENT, startTestStack, type TestStack } from '../support/stack.ts';
import { MIXED_AREAS, MIXED_BOOKINGS_PER_USER, MIXED_SHARES, MIXED_USERS, mixedRequests, mixedRiskWarmUp, mixedUserId, seedMixed, zipf } from './mixed.ts';
import { SupergraphInfo } from './schema.ts';

describe('the mixed benchmark workload', () => {
  it('draws ranks from a Zipf distribution: rank k about (k + 1)^1.1 times rarer than the first', () => {
    const draw = zipf(MIXED_USERS);
    const next = seededRandom(7);
    const counts = new Map<number, number>();
    for (let i = 0; i < 200_000; i++) { const k = draw(next()); counts.set(k, (counts.get(k) ?? 0) + 1); }
    expect(Math.min(...counts.keys())).toBe(0);
    expect(Math.max(...counts.keys())).toBeLessThan(MIXED_USERS);
    const first = counts.get(0)!;
    // H(10,000, 1.1) is about 6.6: the first rank takes about 15% of the draws.
    expect(first / 200_000).toBeGreaterThan(0.12);
    expect(first / 200_000).toBeLessThan(0.16);
    expect(first / counts.get(9)!).toBeGreaterThan(10 ** 1.1 * 0.8);
    expect(first / counts.get(9)!).toBeLessThan(10 ** 1.1 * 1.25);
    expect(counts.size).toBeGreaterThan(3_000);
  });

  it('mixes 40% user, 30% cross-subgraph, 20% REST, 10% Risk Index, the same sequence for every variant', () => {
    const ours = mixedRequests(new SupergraphInfo(), 'query GetUser($userId: ID!) { user(userId: $userId) { userId } }', '/graphql', false);
    const stock = mixedRequests(new SupergraphInfo(), 'query GetUser($userId: ID!) { user(userId: $userId) { userId } }', '/graphql', true);
    const next = ours.connection(3);
    const again = ours.connection(3);
    const stockNext = stock.connection(3);
    const kinds = new Map<string, number>();
    const areas = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      const request = next();
      expect(again()).toEqual(request);
      const twin = stockNext();
      expect(twin.kind).toBe(request.kind);
      kinds.set(request.kind, (kinds.get(request.kind) ?? 0) + 1);
      if (request.kind === 'rest') {
        expect(request).toMatchObject({ method: 'GET', path: expect.stringMatching(/^\/shared-mobility-insights\/v2\/users\/mixed-user-\d+$/) });
        expect(twin).toMatchObject({ method: 'POST', path: '/graphql' });
        expect(JSON.parse(twin.body!).variables.userId).toBe(request.path.split('/').pop());
      } else {
        expect(request).toMatchObject({ method: 'POST', path: '/graphql' });
      }
      if (request.kind === 'risk') areas.add(JSON.parse(request.body!).variables.wkt);
    }
    for (const [kind, share] of MIXED_SHARES) expect(Math.abs(kinds.get(kind)! / 20_000 - share / 100)).toBeLessThan(0.02);
    expect(MIXED_AREAS).toHaveLength(300);
    expect(areas.size).toBeGreaterThan(100);
    expect(ours.connection(4)()).not.toEqual(ours.connection(3)());
    expect(mixedUserId(0)).toBe('mixed-user-0');
  });

  it('warms the Risk Index with exactly the bodies the mix sends: every area once', () => {
    const schema = new SupergraphInfo();
    const warm = mixedRiskWarmUp(schema).map((request) => JSON.stringify(request));
    expect(new Set(warm).size).toBe(MIXED_AREAS.length);
    const next = mixedRequests(schema, 'query GetUser($userId: ID!) { user(userId: $userId) { userId } }', '/graphql', false).connection(5);
    let risk = 0;
    for (let i = 0; i < 5_000; i++) {
      const request = next();
      if (request.kind !== 'risk') continue;
      risk += 1;
      expect(warm).toContain(request.body);
    }
    expect(risk).toBeGreaterThan(300);
  });
});

describe('seeding the mixed benchmark', () => {
  let t: TestStack;
  beforeAll(async () => { t = await startTestStack({ subgraphs: ['booking', 'scoring'] }); });
  afterAll(async () => { await t?.close(); });

  it('writes 10,000 users, each with ended bookings on vehicles, that the API reads (REST and across subgraphs)', async () => {
    const db = (name: string) => t.stack.subgraphs.find((s) => s.name === name)!.db;
    const counts = await seedMixed(db('scoring'), db('booking'), DEFAULT_CLIENT.org);
    expect(counts).toEqual({ users: MIXED_USERS, bookings: MIXED_USERS * MIXED_BOOKINGS_PER_USER });
    for (const rank of [0, 4_999, MIXED_USERS - 1]) {
      const rest = await t.request('GET', `/shared-mobility-insights/v2/users/${mixedUserId(rank)}`, { token: t.token });
      expect(rest.status).toBe(200);
      expect(rest.body).toMatchObject({ userId: mixedUserId(rank), enrollmentStatus: 'accepted' });
      const res = await t.graphql('query($id: ID!) { user(userId: $id) { bookings(first: 20) { nodes { status vehicle { vin deviceId } } } } }', { id: mixedUserId(rank) });
      expect(res.errors).toBeUndefined();
      const nodes = res.data.user.bookings.nodes as { status: string; vehicle: { vin: string; deviceId: string } | null }[];
      expect(nodes).toHaveLength(MIXED_BOOKINGS_PER_USER);
      for (const node of nodes) expect(node.vehicle?.vin).toMatch(/^ZPF\d{14}$/);
    }
  });
});
