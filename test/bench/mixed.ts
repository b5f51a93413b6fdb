/**
 * The `mixed` scenario: a realistic workload beside the repeated-request ones. 10,000 users (seeded
 * in the server process by batched SQL, `seedMixed`), each with a vehicle and bookings; ids drawn
 * from a Zipf distribution; operations mixed 40% user lookup, 30% cross-subgraph, 20% REST, 10%
 * Risk Index over a few hundred areas; each connection its own API client and token.
 */
import type { Database } from '../../subgraphs/platform/db/orm.ts';
import { seededRandom } from '../../subgraphs/platform/random.ts';
import { box } from './risk-stack.ts';
import type { SupergraphInfo } from './schema.ts';

export const MIXED_USERS = 10_000;
export const MIXED_BOOKINGS_PER_USER = 3;
const ZIPF_EXPONENT = 1.1;

export const mixedUserId = (rank: number) => `mixed-user-${rank}`;

/**
 * 10,000 users (scoring), a vehicle each and three ended bookings each (booking), in one statement
 * per table: generate_series on the database, not 10,000 calls through the API.
 */
export async function seedMixed(scoring: Database, booking: Database | undefined, org: string) {
  const run = (db: Database, sql: string) => db.orm.em.getConnection().execute(sql, [org, MIXED_USERS]);
  await run(scoring, `insert into scoring.users (id, org_id, user_id, date_of_birth, home_zip, enrollment_status, created_at, updated_at)
    select gen_random_uuid(), ?, 'mixed-user-' || i, '1985-04-12', lpad((60000 + i % 1000)::text, 5, '0'), 'accepted', now(), now()
    from generate_series(0, ? - 1) as i`);
  if (!booking) return { users: MIXED_USERS, bookings: 0 };
  // VINs: 17 characters without I, O or Q; devices unique per organisation.
  await run(booking, `insert into booking.vehicles (id, org_id, vin, device_id, created_at, updated_at)
    select gen_random_uuid(), ?, 'ZPF' || lpad(i::text, 14, '0'), '36' || lpad(i::text, 13, '0'), now(), now()
    from generate_series(0, ? - 1) as i`);
  await booking.orm.em.getConnection().execute(`insert into booking.bookings
    (id, org_id, booking_id, vin, user_id, device_id, start_timestamp, estimated_end_timestamp, actual_end_timestamp, created_at, updated_at)
    select gen_random_uuid(), ?, 'mixed-booking-' || i || '-' || k, 'ZPF' || lpad(((i + k) % ?)::text, 14, '0'), 'mixed-user-' || i,
      '36' || lpad(((i + k) % ?)::text, 13, '0'), s, s + 3600, s + 1800, now(), now()
    from generate_series(0, ? - 1) as i, generate_series(0, ? - 1) as k, lateral (select 1767225600 + (i % 300 + k * 7) * 86400 as s) as t`,
  [org, MIXED_USERS, MIXED_USERS, MIXED_USERS, MIXED_BOOKINGS_PER_USER]);
  return { users: MIXED_USERS, bookings: MIXED_USERS * MIXED_BOOKINGS_PER_USER };
}

/** Ranks 0..n-1 with P(rank k) proportional to 1 / (k + 1)^exponent, from a uniform draw in [0, 1). */
export function zipf(n: number, exponent = ZIPF_EXPONENT) {
  const cumulative = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cumulative[k] = sum += 1 / (k + 1) ** exponent;
  return (uniform: number) => {
    const target = uniform * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid] <= target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** 300 areas of about 2 x 2 km: a grid over Chicago and one over Los Angeles. */
export const MIXED_AREAS: string[] = [[-87.9, 41.7], [-118.5, 33.9]].flatMap(([west, south]) =>
  Array.from({ length: 150 }, (_, i) => {
    const w = west + (i % 15) * 0.02;
    const s = south + Math.floor(i / 15) * 0.02;
    return box(w, s, w + 0.02, s + 0.02);
  }));

export type MixedKind = 'user' | 'cross' | 'rest' | 'risk';
export interface MixedRequest { kind: MixedKind; method: 'GET' | 'POST'; path: string; body?: string }

/** The share of each kind of operation, in percent. */
export const MIXED_SHARES: [MixedKind, number][] = [['user', 40], ['cross', 30], ['rest', 20], ['risk', 10]];

const USER_QUERY = 'query MixedUser($id: ID!) { user(userId: $id) { userId homeZip enrollmentStatus } }';
const CROSS_QUERY = 'query MixedUserBookings($id: ID!) { user(userId: $id) { userId homeZip enrollmentStatus bookings(first: 20) { nodes { bookingId startTimestamp status vehicle { vin deviceId } } } } }';

const mixedRiskQuery = (schema: SupergraphInfo) => `query MixedRisk($wkt: WKT!) { riskIndex(wkt: $wkt) { riskInfo { ${schema.selection('RiskInfo', 'risk', 2)} } } }`;

/**
 * The Risk Index request of every area, to send once before measuring. Every variant reaches the same
 * risk subgraph and so the same answer cache, and every variant replays the same per-connection
 * sequences: without this the variant measured first would pay every area's first evaluation
 * (~10 ms each) and the later ones none. Warm, every variant measures the steady state of a server
 * whose areas have been asked before (the crash data change only on ingest).
 */
export const mixedRiskWarmUp = (schema: SupergraphInfo) =>
  MIXED_AREAS.map((wkt) => ({ query: mixedRiskQuery(schema), variables: { wkt } }));

/**
 * The request generator of one connection. `restAsGraphql` (a gateway without our REST paths, the
 * stock Apollo Gateway) sends the REST operation's GraphQL twin instead.
 */
export function mixedRequests(schema: SupergraphInfo, restOperation: string, graphqlPath: string, restAsGraphql: boolean) {
  const riskQuery = mixedRiskQuery(schema);
  const users = zipf(MIXED_USERS);
  const areas = zipf(MIXED_AREAS.length);
  const post = (kind: MixedKind, query: string, variables: Record<string, unknown>): MixedRequest =>
    ({ kind, method: 'POST', path: graphqlPath, body: JSON.stringify({ query, variables }) });
  const build = (kind: MixedKind, uniform: number): MixedRequest => {
    const id = mixedUserId(users(uniform));
    if (kind === 'user') return post(kind, USER_QUERY, { id });
    if (kind === 'cross') return post(kind, CROSS_QUERY, { id });
    if (kind === 'rest') {
      return restAsGraphql ? post(kind, restOperation, { userId: id }) : { kind, method: 'GET', path: `/shared-mobility-insights/v2/users/${id}` };
    }
    return post(kind, riskQuery, { wkt: MIXED_AREAS[areas(uniform)] });
  };
  return {
    /** One request of each kind, for the check before measuring. */
    each: () => MIXED_SHARES.map(([kind]) => build(kind, 0.5)),
    /** A fresh sequence for connection `n`, the same for every variant. */
    connection(n: number) {
      const next = seededRandom(n + 1);
      return () => {
        let pick = next() * 100;
        const [kind] = MIXED_SHARES.find(([, share]) => (pick -= share) < 0) ?? MIXED_SHARES[0];
        return build(kind, next());
      };
    },
  };
}
