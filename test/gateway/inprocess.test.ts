import { ApolloServer } from '@apollo/server';
import { generateKeyPair } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createGateway, type GatewayContext } from '../../gateway/supergraph.ts';
import { InProcessDataSource } from '../../gateway/datasources.ts';
import { ValidatedDocuments } from '../../gateway/validated-documents.ts';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { loadInternalSigningKey, loadSigningKeys } from '../../subgraphs/platform/auth/keys.ts';
import { internalTokenMinter, type InternalTokenMinter } from '../../subgraphs/platform/auth/internal-token.ts';
import { verifyToken, type Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { startTestStack, TEST_HOP_KEY, type TestStack } from '../support/stack.ts';

/**
 * SUBGRAPH_TRANSPORT=inprocess (the default): the gateway executes subgraphs built in its process without HTTP,
 * through each subgraph's own request context. Same internal token, scope and tenancy rules, same results.
 */
let t: TestStack;
let other: { token: string };
/** Our gateway's two transports on the same subgraphs, driven with the same context. */
let viaHttp: ApolloServer<GatewayContext>;
let inProcess: ApolloServer<GatewayContext>;
let urlsForHttp: Record<string, string>;
/** HTTP requests that reached the subgraphs' listeners. */
let httpHits = 0;
let mint: InternalTokenMinter;
/** The caller of an access token, as the gateway's token gate finds it. */
let callerOf: (token: string) => Promise<Caller>;

const USERS = '/shared-mobility-insights/v2/users';
const vin = (n: number) => `INPROC${String(n).padStart(11, '0')}`;
const CROSS = `query Cross($id: ID!) { user(userId: $id) { userId homeZip enrollmentStatus
  bookings(first: 100) { nodes { bookingId startTimestamp status vehicle { vin deviceId } user { userId homeZip } } } } }`;
const LIST = `query List($first: Int) { bookings(first: $first) { nodes { bookingId vehicle { vin deviceId } user { userId homeZip } } } }`;

beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['scoring', 'booking'] });
  other = await t.clientFor('org-b', ['b2b']);
  // The default stack opens no subgraph port: open them here for the HTTP transport to compare with.
  const urls = { ...t.stack.subgraphUrls };
  for (const subgraph of t.stack.subgraphs) {
    subgraph.app.server.on('request', () => { httpHits += 1; });
    urls[subgraph.name] = `${await subgraph.app.listen({ host: '127.0.0.1', port: 0 })}/graphql`;
  }
  // The stack's gateway's keys (its DATA_DIR): the subgraphs verify its internal tokens.
  mint = internalTokenMinter(await loadInternalSigningKey(t.config), t.config.JWT_ISSUER);
  const { publicKey } = await loadSigningKeys(t.config);
  callerOf = (token) => verifyToken(token, publicKey, t.config.JWT_ISSUER);
  viaHttp = new ApolloServer<GatewayContext>({ gateway: createGateway(urls, { mint, hopKey: TEST_HOP_KEY }) });
  inProcess = new ApolloServer<GatewayContext>({ gateway: createGateway(t.stack.subgraphUrls, { mint, local: t.stack.subgraphs }) });
  await Promise.all([viaHttp.start(), inProcess.start()]);
  urlsForHttp = urls;

  // Seed through the gateway (in-process): a user with 12 bookings on 12 vehicles, in org-a.
  expect((await t.graphql('mutation { createUser(input: { userId: "ip-user", homeZip: "60601", dateOfBirth: "1980-01-02" }) { userId } }')).errors).toBeUndefined();
  for (let i = 0; i < 12; i++) {
    const created = await t.graphql('mutation($vin: VIN!, $d: ID) { createVehicle(vin: $vin, deviceId: $d) { vin } }', { vin: vin(i), d: `dev-ip-${i}` });
    expect(created.errors).toBeUndefined();
    const started = await t.graphql('mutation($input: BookingStartInput!) { startBooking(input: $input) { bookingId } }',
      { input: { vin: vin(i), userId: 'ip-user', startTimestamp: 1_800_000_000 + i * 86_400, estimatedEndTimestamp: 1_800_000_000 + i * 86_400 + 3600 } });
    expect(started.errors).toBeUndefined();
  }
});

afterAll(async () => {
  await viaHttp?.stop();
  await inProcess?.stop();
  await t?.close();
});

async function run(server: ApolloServer<GatewayContext>, query: string, variables: Record<string, unknown>, token: string | null) {
  const response = await server.executeOperation({ query, variables }, {
    contextValue: { caller: token ? await callerOf(token) : null, requestId: 'inprocess-test' },
  });
  if (response.body.kind !== 'single') throw new Error('unexpected incremental result');
  return JSON.parse(JSON.stringify(response.body.singleResult)) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}

/** The same operation through both transports: equal results. Returns the in-process one. */
async function same(query: string, variables: Record<string, unknown>, token: string | null) {
  const [http, local] = [await run(viaHttp, query, variables, token), await run(inProcess, query, variables, token)];
  expect(local).toEqual(http);
  return local;
}

describe('configuration', () => {
  it('SUBGRAPH_TRANSPORT is inprocess by default and accepts only http or inprocess', () => {
    expect(loadConfig({}).SUBGRAPH_TRANSPORT).toBe('inprocess');
    expect(loadConfig({ SUBGRAPH_TRANSPORT: 'http' }).SUBGRAPH_TRANSPORT).toBe('http');
    expect(loadConfig({ SUBGRAPH_TRANSPORT: 'inprocess' }).SUBGRAPH_TRANSPORT).toBe('inprocess');
    expect(() => loadConfig({ SUBGRAPH_TRANSPORT: 'grpc' })).toThrow(/SUBGRAPH_TRANSPORT/);
  });

  it('the gateway started with inprocess sends no HTTP request to its subgraphs', async () => {
    const before = httpHits;
    const res = await t.graphql(CROSS, { id: 'ip-user' });
    expect(res.errors).toBeUndefined();
    expect(res.data.user.bookings.nodes).toHaveLength(12);
    expect(httpHits).toBe(before);
    // The HTTP transport on the same subgraphs does reach them (two subgraphs, at least two fetches).
    await run(viaHttp, CROSS, { id: 'ip-user' }, t.token);
    expect(httpHits - before).toBeGreaterThanOrEqual(2);
  });
});

describe('same results as over HTTP', () => {
  it('a cross-subgraph query: the user, their bookings, each booking\'s vehicle and user', async () => {
    const res = await same(CROSS, { id: 'ip-user' }, t.token);
    expect(res.errors).toBeUndefined();
    const user = res.data!.user as { homeZip: string; bookings: { nodes: { vehicle: { vin: string }; user: { userId: string } }[] } };
    expect(user.homeZip).toBe('60601');
    expect(user.bookings.nodes).toHaveLength(12);
    expect(user.bookings.nodes.map((n) => n.vehicle.vin).sort()).toEqual(Array.from({ length: 12 }, (_, i) => vin(i)).sort());
    expect(user.bookings.nodes.every((n) => n.user.userId === 'ip-user')).toBe(true);
  });

  it('bad input, unknown ids and conflicts answer with the same codes', async () => {
    const badVin = await same('query($v: VIN!) { vehicle(vin: $v) { vin } }', { v: 'short' }, t.token);
    expect(badVin.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
    const unknown = await same('query { booking(bookingId: "nope") { bookingId } user(userId: "nobody") { userId } }', {}, t.token);
    expect(unknown.errors).toBeUndefined();
    expect(unknown.data).toEqual({ booking: null, user: null });
    const dupe = await run(inProcess, 'mutation { createUser(input: { userId: "ip-user" }) { userId } }', {}, t.token);
    expect(dupe.errors?.[0].extensions?.code).toBe('CONFLICT');
    const dupeHttp = await run(viaHttp, 'mutation { createUser(input: { userId: "ip-user" }) { userId } }', {}, t.token);
    expect(dupe).toEqual(dupeHttp);
    const nul = await same('mutation($i: CreateUserInput) { createUser(input: $i) { userId } }', { i: { userId: 'nul\u0000id' } }, t.token);
    expect(nul.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
  });
});

describe('the same token and tenancy rules as over HTTP', () => {
  it('no token: UNAUTHENTICATED from each subgraph; an internal token not signed by the gateway too', async () => {
    const none = await same(CROSS, { id: 'ip-user' }, null);
    expect(none.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    expect(none.data?.user ?? null).toBeNull();
    // A gateway with a key of its own: each subgraph refuses its word, in-process and over HTTP.
    const forger = internalTokenMinter((await generateKeyPair('EdDSA')).privateKey, t.config.JWT_ISSUER);
    const forged = {
      inProcess: createGateway(t.stack.subgraphUrls, { mint: forger, local: t.stack.subgraphs }),
      http: createGateway(urlsForHttp, { mint: forger, hopKey: TEST_HOP_KEY }),
    };
    for (const [transport, gateway] of Object.entries(forged)) {
      const server = new ApolloServer<GatewayContext>({ gateway });
      await server.start();
      const bad = await run(server, 'query { bookings(first: 1) { nodes { bookingId } } }', {}, t.token);
      await server.stop();
      expect(bad.data?.bookings ?? null, transport).toBeNull();
      expect(bad.errors?.[0].extensions?.code, transport).toBe('UNAUTHENTICATED');
    }
  });

  it('a token without the subgraph\'s scope is FORBIDDEN', async () => {
    const roadside = await t.clientFor('org-a', ['roadside']);
    const res = await same('query { user(userId: "ip-user") { userId } }', {}, roadside.token);
    expect(res.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });

  it('another organisation sees none of org-a\'s users or bookings', async () => {
    const user = await same(CROSS, { id: 'ip-user' }, other.token);
    expect(user.errors).toBeUndefined();
    expect(user.data).toEqual({ user: null });
    const list = await same(LIST, { first: 100 }, other.token);
    expect(list.data).toEqual({ bookings: { nodes: [] } });
    const vehicle = await same('query($v: VIN!) { vehicle(vin: $v) { vin } }', { v: vin(0) }, other.token);
    expect(vehicle.data).toEqual({ vehicle: null });
  });

  it('end to end through the in-process gateway: REST 401 without a token, 404 for another organisation', async () => {
    expect((await t.request('GET', `${USERS}/ip-user`, { token: null })).status).toBe(401);
    const gql = await t.graphql('{ user(userId: "ip-user") { userId } }', {}, null);
    expect(gql.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    expect((await t.request('GET', `${USERS}/ip-user`, { token: other.token })).status).toBe(404);
    const mine = await t.request('GET', `${USERS}/ip-user`, { token: t.token });
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ userId: 'ip-user', homeZip: '60601' });
  });

  it('the data source refuses nothing by itself: a context without a token reaches the subgraph guard', async () => {
    const scoring = t.stack.subgraphs.find((s) => s.name === 'scoring')!;
    const source = new InProcessDataSource(scoring, mint);
    const response = await source.process({
      kind: 'incoming operation' as never, request: { query: '{ user(userId: "ip-user") { userId } }' },
      context: { requestId: 'direct' }, incomingRequestContext: {} as never,
    });
    expect(response.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    const allowed = await source.process({
      kind: 'incoming operation' as never, request: { query: '{ user(userId: "ip-user") { userId } }' },
      context: { requestId: 'direct', caller: await callerOf(t.token) }, incomingRequestContext: {} as never,
    });
    expect(allowed).toEqual({ data: { user: { userId: 'ip-user' } } });
  });
});

describe('SQL statements per request (no N+1), both transports', () => {
  it('100 bookings with user and vehicle cost a constant number of statements per subgraph', async () => {
    for (let i = 12; i < 60; i++) {
      expect((await t.graphql('mutation($vin: VIN!, $d: ID) { createVehicle(vin: $vin, deviceId: $d) { vin } }', { vin: vin(i), d: `dev-ip-${i}` })).errors).toBeUndefined();
      for (const k of [0, 1]) {
        const userId = `ip-driver-${(i * 2 + k) % 25}`;
        const started = await t.graphql('mutation($input: BookingStartInput!) { startBooking(input: $input) { bookingId } }',
          { input: { vin: vin(i), userId, startTimestamp: 1_700_000_000 + k * 86_400, estimatedEndTimestamp: 1_700_000_000 + k * 86_400 + 3600 } });
        expect(started.errors).toBeUndefined();
      }
    }
    for (let u = 0; u < 25; u++) {
      expect((await t.graphql('mutation($id: ID) { createUser(input: { userId: $id, homeZip: "94105" }) { userId } }', { id: `ip-driver-${u}` })).errors).toBeUndefined();
    }
    const statements = Object.fromEntries(t.stack.subgraphs.map((s) => [s.name, s.db.statements]));
    const count = async (server: ApolloServer<GatewayContext>, first: number) => {
      for (const s of Object.values(statements)) s.reset();
      const res = await run(server, LIST, { first }, t.token);
      expect(res.errors).toBeUndefined();
      const nodes = (res.data!.bookings as { nodes: { user: { homeZip: string } | null; vehicle: { vin: string } }[] }).nodes;
      return { nodes, booking: statements.booking.count, scoring: statements.scoring.count };
    };
    for (const server of [inProcess, viaHttp]) {
      const two = await count(server, 2);
      const hundred = await count(server, 100);
      expect(two.nodes).toHaveLength(2);
      expect(hundred.nodes).toHaveLength(100);
      // Every booking's user is resolved by scoring (12 of ip-user, the rest of the 25 drivers).
      expect(hundred.nodes.every((n) => n.user !== null && n.vehicle.vin)).toBe(true);
      expect(hundred.nodes.filter((n) => n.user?.homeZip === '94105')).toHaveLength(88);
      expect(hundred.booking).toBe(two.booking);
      expect(hundred.scoring).toBe(two.scoring);
      expect(hundred.booking).toBeLessThanOrEqual(3);
      expect(hundred.scoring).toBe(1);
    }
  });
});

describe('the plan cache', () => {
  it('builds one plan for concurrent first requests of a new document, then answers from the cache', async () => {
    const gateway = createGateway(t.stack.subgraphUrls, { mint, local: t.stack.subgraphs });
    const server = new ApolloServer<GatewayContext>({ gateway });
    await server.start();
    try {
      const { queryPlanner } = gateway as unknown as { queryPlanner: { buildQueryPlan(...args: unknown[]): unknown } };
      const built = vi.spyOn(queryPlanner, 'buildQueryPlan');
      // A burst of subscribers of a document nobody asked for yet: each plans it as it starts.
      await Promise.all(Array.from({ length: 5 }, () => gateway.plan(LIST, 'List')));
      expect(built).toHaveBeenCalledTimes(1);
      await gateway.plan(LIST, 'List');
      expect(built).toHaveBeenCalledTimes(1);
    } finally {
      await server.stop();
    }
  });

  it('validates each fetch document of a plan as it builds the plan, not on the first request', async () => {
    const gateway = createGateway(t.stack.subgraphUrls, { mint, local: t.stack.subgraphs });
    const server = new ApolloServer<GatewayContext>({ gateway });
    await server.start();
    try {
      const { serviceMap } = gateway as unknown as { serviceMap: Record<string, { dataSource: unknown }> };
      const validations = Object.values(serviceMap).flatMap(({ dataSource }) => (dataSource instanceof InProcessDataSource
        ? [vi.spyOn((dataSource as unknown as { validated: WeakMap<object, unknown> }).validated, 'set')] : []));
      expect(validations).toHaveLength(2);
      const count = () => validations.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
      await gateway.plan(CROSS);
      // The user from scoring, then their bookings (with vehicles) from booking.
      expect(count()).toBeGreaterThanOrEqual(2);
      for (const spy of validations) for (const [, errors] of spy.mock.calls) expect(errors).toEqual([]);
      const planned = count();
      const { data, errors } = await run(server, CROSS, { id: 'ip-user' }, t.token);
      expect(errors).toBeUndefined();
      expect((data!.user as { bookings: { nodes: unknown[] } }).bookings.nodes).toHaveLength(12);
      expect(count()).toBe(planned);
    } finally {
      await server.stop();
    }
  });

  it('a query prepared ahead is neither parsed nor validated by its first request; one that fails is left to it', async () => {
    const gateway = createGateway(t.stack.subgraphUrls, { mint, local: t.stack.subgraphs });
    const documents = new ValidatedDocuments({ parseOptions: { maxTokens: 5000 }, validationRules: [], introspection: false });
    gateway.onSchemaLoadOrUpdate(({ apiSchema }) => documents.schemaLoaded(apiSchema));
    const phases: string[] = [];
    const server = new ApolloServer<GatewayContext>({
      gateway, documentStore: documents, introspection: false,
      plugins: [{ async requestDidStart() {
        return { async parsingDidStart() { phases.push('parsed'); }, async validationDidStart() { phases.push('validated'); } };
      } }],
    });
    await server.start();
    try {
      documents.prepare(CROSS);
      const { data } = await run(server, CROSS, { id: 'ip-user' }, t.token);
      expect((data!.user as { userId: string }).userId).toBe('ip-user');
      expect(phases).toEqual([]);
      // Unknown field; introspection while it is off: Apollo Server answers them as it would unprepared.
      for (const query of ['query { user(userId: "ip-user") { nope } }', 'query { __schema { queryType { name } } }']) {
        documents.prepare(query);
        const refused = await run(server, query, {}, t.token);
        expect(refused.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
      }
      expect(phases).toEqual(['parsed', 'validated', 'parsed', 'validated']);
    } finally {
      await server.stop();
    }
  });
});
