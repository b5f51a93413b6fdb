import { userRoutes } from '../../subgraphs/scoring/rest-users.ts';
import type { Targets } from './protocol.ts';
import { SupergraphInfo } from './schema.ts';
import { MIXED_BOOKINGS_PER_USER, mixedRequests, type MixedRequest } from './mixed.ts';

/**
 * Who answers a measurement: (a) `direct` the subgraph itself, (b) our gateway with subgraphs over
 * loopback HTTP, (b') our gateway executing them in-process, (c) a stock Apollo Gateway, (d) Hive
 * Gateway with its Rust query planner (hive.ts), with its defaults and with in-flight de-duplication
 * off. REST rows are measured against their GraphQL twin through the same gateway. `bare` is the
 * physical limit: a minimal Fastify + driver server doing the REST user lookup (bare.ts); `bare-twin`
 * the same server answering the cross query with the same reads as our stack. `document-id`: our
 * default gateway given only a registered trusted document's id (`documentId`), against its full text.
 * `user-token`: the default gateway with an end user's token (OpenID Connect), against `client-token`, the client's.
 */
export type Variant = 'direct' | 'gateway' | 'gateway-inprocess' | 'stock' | 'hive' | 'hive-nodedup' | 'rest' | 'rest-inprocess' | 'bare' | 'bare-twin'
  | 'client-token' | 'user-token' | 'document-id';

export interface Measurement {
  variant: Variant;
  url: string;
  method: 'GET' | 'POST';
  body?: string;
  /** Send the bench client's bearer token. */
  auth: boolean;
  /** With `auth`: this bearer token instead of the bench client's (an end user's, scenario `user-token`). */
  token?: string;
  /** A reason the response is wrong (checked once before measuring), or null. */
  check(status: number, body: unknown): string | null;
  /** What the answer was, for the report (e.g. which member of a union). */
  describe?(body: unknown): string;
  /**
   * A workload of many requests (scenario `mixed`): `url` is the base, each connection draws its
   * requests from `connection(n)` with its own token; `check` applies to every request of `each()`.
   */
  mix?: { each(): MixedRequest[]; connection(n: number): () => MixedRequest };
  /**
   * Another gateway than ours: where our gateway answers the same request (for a workload, its base
   * URL); the answers must be equal before this one is measured.
   */
  compareWith?: string;
}

export interface Ratio {
  label: string;
  numerator: Variant;
  denominator: Variant;
  /** The target for this ratio of requests/s, if it sets one. */
  target?: number;
}

export interface Seed {
  /** The user every scenario reads (with date of birth and ZIP; with bookings when booking runs). */
  userId?: string;
  /** Bookings created for that user. */
  bookings: number;
  /** What went wrong while seeding, by area. */
  problems: Record<string, string>;
  /** The id of the trusted document registered for the bench client: the `user` scenario's query (seeded only when `documents` runs). */
  documentId?: string;
  /** The `mixed` scenario's data (seeded only when it runs). */
  mixed?: { users: number; bookings: number };
}

export interface ScenarioContext {
  targets: Targets;
  /** Subgraphs built by the server process. */
  subgraphs: readonly string[];
  schema: SupergraphInfo;
  seed: Seed;
  token: string;
  /** One token per connection, each of its own API client (scenario `mixed`). */
  tokens?: string[];
  /** An end user's token from an issuer the bench organisation trusts (scenario `user-token`, user-token.ts). */
  userToken?: string;
}

export interface Scenario {
  name: string;
  title: string;
  /** Subgraphs that must be present. */
  needs: string[];
  /** "Type.field" entries that must be in the supergraph. */
  fields: string[];
  /** Why the scenario cannot run on the seeded data (null when it can). */
  blocked?(ctx: ScenarioContext): string | null;
  measurements(ctx: ScenarioContext): Measurement[];
  ratios: Ratio[];
  /** The ceilings on server CPU per request, microseconds, by variant. */
  cpuTargets?: { variant: Variant; label: string; micros: number }[];
}

/* ------------------------------------------------------------------------------------------- */

export async function graphql(url: string, query: string, variables: Record<string, unknown>, token?: string) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  const body = await response.json() as { data?: Record<string, unknown> | null; errors?: { message: string }[] };
  if (body.errors?.length) throw new Error(`${response.status}: ${body.errors.map((e) => e.message).join('; ')}`);
  return body.data ?? {};
}

/** A bearer token of an API client (client credentials). */
export async function token(gateway: string, client: { id: string; secret: string }) {
  const response = await fetch(`${gateway}/platform/oauth/v1/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret }).toString(),
  });
  if (!response.ok) throw new Error(`token request failed: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

const post = (variant: Variant, url: string, query: string, variables: Record<string, unknown>, auth: boolean,
  check: (data: Record<string, unknown>) => string | null): Measurement => ({
  variant, url, method: 'POST', auth, body: JSON.stringify({ query, variables }),
  check: (status, body) => {
    const b = body as { data?: Record<string, unknown> | null; errors?: { message: string }[] } | null;
    if (status !== 200) return `HTTP ${status}: ${JSON.stringify(body).slice(0, 200)}`;
    if (b?.errors?.length) return `GraphQL error: ${b.errors.map((e) => e.message).join('; ').slice(0, 200)}`;
    return b?.data ? check(b.data) : 'no data';
  },
});

/** Hive Gateway (`variant`: with its defaults, or de-duplication off) on a GraphQL operation, its answer compared with our default gateway's. */
const hive = (ctx: ScenarioContext, variant: 'hive' | 'hive-nodedup', query: string, variables: Record<string, unknown>, auth: boolean,
  check: (data: Record<string, unknown>) => string | null): Measurement => ({
  ...post(variant, `${variant === 'hive' ? ctx.targets.hive : ctx.targets.hiveNodedup}/graphql`, query, variables, auth, check),
  compareWith: `${ctx.targets.gatewayInprocess}/graphql`,
});

/**
 * The same GraphQL operation through (a) the owning subgraph, (b) both transports of our gateway, (c)
 * stock, (d) Hive Gateway (`nodedup`: also with its de-duplication off).
 */
function fourWays(ctx: ScenarioContext, owner: string | null, query: string, variables: Record<string, unknown>, auth: boolean,
  check: (data: Record<string, unknown>) => string | null, nodedup = false): Measurement[] {
  return [
    ...(owner ? [post('direct', ctx.targets.direct[owner], query, variables, auth, check)] : []),
    post('gateway', `${ctx.targets.gateway}/graphql`, query, variables, auth, check),
    post('gateway-inprocess', `${ctx.targets.gatewayInprocess}/graphql`, query, variables, auth, check),
    post('stock', ctx.targets.stock, query, variables, auth, check),
    hive(ctx, 'hive', query, variables, auth, check),
    ...(nodedup ? [hive(ctx, 'hive-nodedup', query, variables, auth, check)] : []),
  ];
}

const needUser = (ctx: ScenarioContext) => ctx.seed.userId ? null : `no seeded user (${ctx.seed.problems.scoring ?? 'scoring missing'})`;

const GATEWAY_VS_STOCK: Ratio[] = [
  { label: 'gateway (http) / stock', numerator: 'gateway', denominator: 'stock' },
  { label: 'gateway (in-process) / stock', numerator: 'gateway-inprocess', denominator: 'stock' },
];
const GATEWAY_VS_DIRECT: Ratio[] = [
  { label: 'gateway (http) / direct', numerator: 'gateway', denominator: 'direct' },
  { label: 'gateway (in-process) / direct', numerator: 'gateway-inprocess', denominator: 'direct' },
];

const getUserRoute = userRoutes.find((r) => r.operationId === 'getUser');
const userPath = (userId: string | undefined) => `/shared-mobility-insights/v2/users/${encodeURIComponent(userId ?? '')}`;
// The REST user resource's fields, in the order the REST path answers them (bare.ts must answer the same JSON).
const REST_USER_KEYS = 'userId,userID,dateOfBirth,homeZip,enrollmentStatus,createdAt,updatedAt';

/** The bare server's answer to the REST user lookup: the physical limit every scenario is also compared with. */
const bareUser = (ctx: ScenarioContext): Measurement => ({
  variant: 'bare', url: `${ctx.targets.bare}${userPath(ctx.seed.userId)}`, method: 'GET', auth: true,
  check: (status, body) => {
    if (status !== 200 || (body as { userId?: string }).userId !== ctx.seed.userId) return `HTTP ${status}: ${JSON.stringify(body).slice(0, 200)}`;
    return Object.keys(body as object).join(',') === REST_USER_KEYS ? null : `fields ${Object.keys(body as object).join(',')} differ from the REST user's`;
  },
});

/**
 * Against Hive Gateway with its defaults: our default (in-process) at `target` or more, over HTTP
 * at `httpTarget` (issue 26); with `nodedup`, Hive without de-duplication against its defaults too.
 */
const VERSUS_HIVE = (target: number, httpTarget?: number, nodedup = false): Ratio[] => [
  { label: 'gateway (in-process, default) / hive', numerator: 'gateway-inprocess', denominator: 'hive', target },
  { label: 'gateway (http) / hive', numerator: 'gateway', denominator: 'hive', ...(httpTarget ? { target: httpTarget } : {}) },
  ...(nodedup ? [{ label: 'hive (de-duplication off) / hive', numerator: 'hive-nodedup', denominator: 'hive' } as Ratio] : []),
];

const VERSUS_BARE = (numerators: [Variant, string][], target?: number): Ratio[] =>
  numerators.map(([numerator, label]) => ({ label: `${label} / bare`, numerator, denominator: 'bare', ...(target ? { target } : {}) }));

/** City of Chicago, ~750 km² (the "city" area of test/bench/risk-areas.ts; longitude first). */
export const CHICAGO = 'POLYGON((-87.95 41.7, -87.68 41.7, -87.68 42, -87.95 42, -87.95 41.7))';

/** The cross-subgraph query; `ids` ('id ' or '') selects each entity's id too. */
export const crossQuery = (ids: string) =>
  `query BenchUserBookings($id: ID!) { user(userId: $id) { ${ids}userId homeZip enrollmentStatus bookings(first: 20) { nodes { ${ids}bookingId startTimestamp status vehicle { ${ids}vin deviceId } } } } }`;

const crossScenario = (name: string, ids: string): Scenario => ({
  name,
  title: `cross-subgraph query: a user, their bookings, each booking's vehicle${ids ? ', with ids' : ''}`,
  needs: ['scoring', 'booking'], fields: ['Query.user', 'User.bookings', 'Booking.vehicle'],
  blocked: (ctx) => needUser(ctx) ?? (ctx.seed.bookings ? null : `no seeded bookings (${ctx.seed.problems.booking ?? 'booking missing'})`),
  measurements: (ctx) => {
    const check = (d: Record<string, unknown>) => {
      const nodes = (d.user as { bookings?: { nodes?: { vehicle?: unknown }[] } } | null)?.bookings?.nodes ?? [];
      return nodes.length === ctx.seed.bookings && nodes.every((n) => n.vehicle) ? null : `expected ${ctx.seed.bookings} bookings with vehicles, got ${nodes.length}`;
    };
    // Without ids, also against the bare twin doing the same two reads, whose answer must equal ours.
    const twin = ids ? [] : [{ ...post('bare-twin', `${ctx.targets.bare}/graphql`, crossQuery(ids), { id: ctx.seed.userId }, true, check), compareWith: `${ctx.targets.gatewayInprocess}/graphql` }];
    return fourWays(ctx, null, crossQuery(ids), { id: ctx.seed.userId }, true, check, !ids).concat(bareUser(ctx), twin);
  },
  ratios: [
    { label: 'gateway (http) / stock', numerator: 'gateway', denominator: 'stock' },
    { label: 'gateway (in-process, default) / stock', numerator: 'gateway-inprocess', denominator: 'stock', target: 1.5 },
    ...VERSUS_BARE([['gateway', 'gateway (http)'], ['gateway-inprocess', 'gateway (in-process, default)']]),
    ...(ids ? [] : [
      { label: 'gateway (in-process, default) / bare twin (same reads)', numerator: 'gateway-inprocess', denominator: 'bare-twin', target: 0.25 },
      { label: 'bare twin (same reads) / bare', numerator: 'bare-twin', denominator: 'bare' },
      ...VERSUS_HIVE(1, undefined, true),
    ] satisfies Ratio[]),
  ],
  cpuTargets: [{ variant: 'gateway-inprocess', label: 'gateway (in-process, default)', micros: 3000 }],
});

const BENCH_USER_QUERY = 'query BenchUser($id: ID!) { user(userId: $id) { userId homeZip enrollmentStatus } }';

/** Registers the user query as a trusted document of the bench client (scenario `documents`), through the admin API; its id. */
export async function publishBenchDocuments(gateway: string, client: { id: string; secret: string }): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: client.id, client_secret: client.secret, scope: 'admin' });
  const admin = await (await fetch(`${gateway}/platform/oauth/v1/token`, { method: 'POST', body: form })).json() as { access_token: string };
  const documentId = 'bench-user-v1';
  const response = await fetch(`${gateway}/platform/admin/v1/trusted-documents/manifests`, {
    method: 'POST', headers: { authorization: `Bearer ${admin.access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ clientId: client.id, name: 'bench', manifest: { [documentId]: BENCH_USER_QUERY } }),
  });
  if (response.status !== 201) throw new Error(`publishing the bench manifest: ${response.status} ${await response.text()}`);
  return documentId;
}

export const scenarios: Scenario[] = [
  {
    name: 'user',
    title: 'single-subgraph query: user by id',
    needs: ['scoring'], fields: ['Query.user'],
    blocked: needUser,
    measurements: (ctx) => fourWays(ctx, 'scoring', BENCH_USER_QUERY,
      { id: ctx.seed.userId }, true, (d) => ((d.user as { userId?: string } | null)?.userId === ctx.seed.userId ? null : 'user not found'), true).concat(bareUser(ctx)),
    ratios: [
      { label: 'gateway (http) / direct', numerator: 'gateway', denominator: 'direct', target: 0.6 },
      { label: 'gateway (in-process) / direct', numerator: 'gateway-inprocess', denominator: 'direct', target: 0.6 },
      ...GATEWAY_VS_STOCK,
      ...VERSUS_BARE([['gateway', 'gateway (http)']]),
      ...VERSUS_BARE([['gateway-inprocess', 'gateway (in-process, default)']], 0.33),
      ...VERSUS_HIVE(1, undefined, true),
    ],
  },
  {
    name: 'documents',
    title: 'trusted documents: the user query by its registered id (documentId) and by its full text',
    needs: ['scoring'], fields: ['Query.user'],
    blocked: (ctx) => needUser(ctx) ?? (ctx.seed.documentId ? null : `no registered document (${ctx.seed.problems.documents ?? 'not seeded'})`),
    measurements: (ctx) => {
      const check = (d: Record<string, unknown>) => ((d.user as { userId?: string } | null)?.userId === ctx.seed.userId ? null : 'user not found');
      const fullText = post('gateway-inprocess', `${ctx.targets.gatewayInprocess}/graphql`, BENCH_USER_QUERY, { id: ctx.seed.userId }, true, check);
      return [fullText, { ...fullText, variant: 'document-id', body: JSON.stringify({ documentId: ctx.seed.documentId, variables: { id: ctx.seed.userId } }) }];
    },
    ratios: [{ label: 'id only / full text (in-process)', numerator: 'document-id', denominator: 'gateway-inprocess' }],
  },
  {
    name: 'user-token',
    title: "user by id with an end user's token (OpenID Connect issuer) and with the client's",
    needs: ['scoring'], fields: ['Query.user'],
    blocked: (ctx) => needUser(ctx) ?? (ctx.userToken ? null : 'no end user token (the bench issuer was not trusted)'),
    measurements: (ctx) => {
      const url = `${ctx.targets.gatewayInprocess}/graphql`;
      const check = (d: Record<string, unknown>) => ((d.user as { userId?: string } | null)?.userId === ctx.seed.userId ? null : 'user not found');
      return [
        post('client-token', url, BENCH_USER_QUERY, { id: ctx.seed.userId }, true, check),
        { ...post('user-token', url, BENCH_USER_QUERY, { id: ctx.seed.userId }, true, check), token: ctx.userToken },
      ];
    },
    ratios: [{ label: 'user token / client token (in-process)', numerator: 'user-token', denominator: 'client-token' }],
  },
  crossScenario('cross', ''),
  // What a browser app with a normalising cache (Apollo Client's InMemoryCache) selects: the same plus every entity's id.
  crossScenario('cross-ids', 'id '),
  {
    name: 'rest',
    title: 'REST GET /shared-mobility-insights/v2/users/:id and its GraphQL twin',
    needs: ['scoring'], fields: ['Query.user'],
    blocked: (ctx) => needUser(ctx) ?? (getUserRoute ? null : 'no getUser REST row'),
    measurements: (ctx) => {
      const path = userPath(ctx.seed.userId);
      const rest = (variant: Variant, base: string): Measurement => ({
        variant, url: `${base}${path}`, method: 'GET', auth: true,
        check: (status, body) => {
          if (status !== 200 || (body as { userId?: string }).userId !== ctx.seed.userId) return `HTTP ${status}: ${JSON.stringify(body).slice(0, 200)}`;
          return Object.keys(body as object).join(',') === REST_USER_KEYS ? null : `fields ${Object.keys(body as object).join(',')}, expected ${REST_USER_KEYS}`;
        },
      });
      const twinCheck = (d: Record<string, unknown>) => ((d.user as { userId?: string } | null)?.userId === ctx.seed.userId ? null : 'user not found');
      const twin = (variant: Variant, base: string) => post(variant, `${base}/graphql`, getUserRoute!.operation, { userId: ctx.seed.userId }, true, twinCheck);
      return [
        rest('rest', ctx.targets.gateway), twin('gateway', ctx.targets.gateway),
        rest('rest-inprocess', ctx.targets.gatewayInprocess), twin('gateway-inprocess', ctx.targets.gatewayInprocess),
        // Hive Gateway has no REST paths: the twin, as for stock in the mixed workload.
        hive(ctx, 'hive', getUserRoute!.operation, { userId: ctx.seed.userId }, true, twinCheck),
        bareUser(ctx),
      ];
    },
    ratios: [
      { label: 'REST / GraphQL twin (http)', numerator: 'rest', denominator: 'gateway', target: 0.9 },
      { label: 'REST / GraphQL twin (in-process)', numerator: 'rest-inprocess', denominator: 'gateway-inprocess', target: 0.9 },
      ...VERSUS_BARE([['rest', 'REST (http)'], ['gateway', 'GraphQL twin (http)']]),
      ...VERSUS_BARE([['rest-inprocess', 'REST (in-process, default)'], ['gateway-inprocess', 'GraphQL twin (in-process, default)']], 0.33),
      ...VERSUS_HIVE(1),
    ],
  },
  {
    name: 'mixed',
    title: 'mixed workload: 10,000 users drawn by Zipf (s = 1.1); 40% user, 30% cross-subgraph, 20% REST, 10% Risk Index (300 areas); a client and token per connection',
    needs: ['scoring', 'booking', 'risk'], fields: ['Query.user', 'User.bookings', 'Booking.vehicle', 'Query.riskIndex'],
    blocked: (ctx) => (ctx.seed.mixed && ctx.tokens?.length ? null : `not seeded (${ctx.seed.problems.mixed ?? 'no tokens'})`),
    measurements: (ctx) => {
      const mixed = (variant: Variant, base: string, path: string, restAsGraphql: boolean): Measurement => ({
        variant, url: base, method: 'GET', auth: true, mix: mixedRequests(ctx.schema, getUserRoute!.operation, path, restAsGraphql),
        check: (status, body) => (status === 200 ? mixedProblem(body) : `HTTP ${status}: ${JSON.stringify(body).slice(0, 200)}`),
      });
      const stock = new URL(ctx.targets.stock);
      return [
        mixed('gateway-inprocess', ctx.targets.gatewayInprocess, '/graphql', false),
        mixed('gateway', ctx.targets.gateway, '/graphql', false),
        // Stock Apollo Gateway and Hive Gateway have no REST paths: their 20% are the REST operation's GraphQL twin.
        mixed('stock', stock.origin, stock.pathname, true),
        { ...mixed('hive', ctx.targets.hive, '/graphql', true), compareWith: ctx.targets.gatewayInprocess },
      ];
    },
    ratios: [...GATEWAY_VS_STOCK, ...VERSUS_HIVE(2.5, 1.2)],
  },
  {
    name: 'coverage',
    title: 'coverage score: prequalCoverageScore(userId)',
    needs: ['scoring'], fields: ['Query.prequalCoverageScore'],
    blocked: needUser,
    measurements: (ctx) => {
      const field = ctx.schema.field('Query', 'prequalCoverageScore')!;
      const type = SupergraphInfo.namedType(field.type);
      const query = `query BenchCoverage($id: ID!) { prequalCoverageScore(userId: $id) { ${ctx.schema.selection(type, 'scoring', 2)} } }`;
      const typename = (body: unknown) => String((body as { data?: { prequalCoverageScore?: { __typename?: string } } }).data?.prequalCoverageScore?.__typename);
      return fourWays(ctx, 'scoring', query, { id: ctx.seed.userId }, true, (d) => (d.prequalCoverageScore ? null : 'no score'))
        .map((m) => ({ ...m, describe: (body: unknown) => `answer: ${typename(body)}` }));
    },
    ratios: [...GATEWAY_VS_DIRECT, ...GATEWAY_VS_STOCK],
  },
  {
    name: 'risk',
    title: 'Risk Index for a city polygon (Chicago): area and riskInfo',
    needs: ['risk'], fields: ['Query.riskIndex', 'RiskReport.riskInfo'],
    measurements: (ctx) => {
      const area = ctx.schema.field('RiskReport', 'area') ? `area { ${ctx.schema.selection('RiskArea', 'risk', 1)} } ` : '';
      const query = `query BenchRisk($wkt: WKT!) { riskIndex(wkt: $wkt) { ${area}riskInfo { ${ctx.schema.selection('RiskInfo', 'risk', 2)} } } }`;
      return fourWays(ctx, 'risk', query, { wkt: CHICAGO }, false, (d) => (d.riskIndex ? null : 'no report'));
    },
    ratios: [...GATEWAY_VS_DIRECT, ...GATEWAY_VS_STOCK],
  },
];

/** What is wrong with one answer of the mixed workload (GraphQL or the REST user), or null. */
function mixedProblem(body: unknown): string | null {
  const b = body as { data?: { user?: { bookings?: { nodes?: { vehicle?: unknown }[] } }; riskIndex?: unknown }; errors?: { message: string }[]; userId?: string };
  if (b.errors?.length) return `GraphQL error: ${b.errors.map((e) => e.message).join('; ').slice(0, 200)}`;
  if (b.userId) return null;
  if (b.data?.riskIndex) return null;
  const nodes = b.data?.user?.bookings?.nodes;
  if (nodes && (nodes.length !== MIXED_BOOKINGS_PER_USER || !nodes.every((n) => n.vehicle))) return `expected ${MIXED_BOOKINGS_PER_USER} bookings with vehicles, got ${nodes.length}`;
  return b.data?.user ? null : `no answer: ${JSON.stringify(body).slice(0, 200)}`;
}

/* ------------------------------------------------------------------------------------------- */

/** A made-up full Source A MVR (spec/mvr-formats.md), so the coverage score has all it needs. */
const BENCH_MVR = {
  id: 'mvr_bench', object: 'motor_vehicle_report', report_type: 'full', full_name: 'Bench Driver',
  license_number: 'B0000001', license_state: 'IL', license_status: 'VALID', license_class: 'D',
  issued_date: '2022-01-10', first_issued_date: '2005-06-01', expiration_date: '2030-01-10',
  restrictions: [], endorsements: [],
  violations: [{ type: 'Speeding', description: 'Speeding 11-15 over', acd_code: 'S93', violation_date: '2024-05-01', conviction_date: '2024-06-10', state: 'IL', points: 1 }],
  accidents: [], suspensions: [], created_at: '2026-10-02T17:04:11Z',
};

/** A VIN from a number: 17 characters, no I, O or Q. */
const vin = (n: number) => `1BENCH${String(n).padStart(11, '0')}`.toUpperCase().replace(/[IOQ]/g, 'X');

/**
 * Seeds through our gateway's GraphQL API: a user with date of birth and ZIP, and (when booking
 * runs) `bookingCount` vehicles with one ended booking each for that user. Each area's failure is
 * recorded, not thrown, so the scenarios that do not need it still run.
 */
export async function seed(ctx: Omit<ScenarioContext, 'seed'>, bookingCount = 10): Promise<Seed> {
  const result: Seed = { bookings: 0, problems: {} };
  const url = `${ctx.targets.gateway}/graphql`;
  const userId = `bench-user-${Date.now().toString(36)}`;
  if (ctx.subgraphs.includes('scoring')) {
    try {
      await graphql(url, 'mutation($input: CreateUserInput) { createUser(input: $input) { userId } }',
        { input: { userId, dateOfBirth: '1985-04-12', homeZip: '60601' } }, ctx.token);
      result.userId = userId;
    } catch (error) {
      result.problems.scoring = (error as Error).message;
    }
  }
  if (result.userId && ctx.schema.field('Mutation', 'createMvr')) {
    try {
      await graphql(url, 'mutation($id: ID!, $report: JSON) { createMvr(userId: $id, source: SOURCE_A, report: $report) { __typename } }',
        { id: userId, report: BENCH_MVR }, ctx.token);
    } catch (error) {
      result.problems.mvr = (error as Error).message;
    }
  }
  if (ctx.subgraphs.includes('booking') && result.userId) {
    try {
      const day = 86_400;
      const start = Math.floor(Date.UTC(2026, 0, 1) / 1000);
      for (let i = 0; i < bookingCount; i++) {
        await graphql(url, 'mutation($vin: VIN!, $device: ID) { createVehicle(vin: $vin, deviceId: $device) { vin } }',
          { vin: vin(i), device: `35${String(i).padStart(13, '0')}` }, ctx.token);
        const started = await graphql(url, 'mutation($input: BookingStartInput!) { startBooking(input: $input) { bookingId } }',
          { input: { vin: vin(i), userId, startTimestamp: start + i * day, estimatedEndTimestamp: start + i * day + 3600 } }, ctx.token);
        const bookingId = (started.startBooking as { bookingId: string }).bookingId;
        await graphql(url, 'mutation($id: ID!, $end: EpochSeconds!) { endBooking(bookingId: $id, actualEndTimestamp: $end) { bookingId } }',
          { id: bookingId, end: start + i * day + 1800 }, ctx.token);
        result.bookings += 1;
      }
    } catch (error) {
      result.problems.booking = (error as Error).message;
    }
  }
  return result;
}

/** Why a scenario cannot run, or null. */
export function skipReason(scenario: Scenario, ctx: ScenarioContext): string | null {
  const absent = scenario.needs.filter((name) => !ctx.subgraphs.includes(name));
  if (absent.length) return `subgraph ${absent.join(', ')} not built yet`;
  const missing = ctx.schema.missing(scenario.fields);
  if (missing.length) return `supergraph lacks ${missing.join(', ')}`;
  return scenario.blocked?.(ctx) ?? null;
}
