/**
 * One database per area (`<NAME>_DATABASE_URL`): the stack with every area in a PostgreSQL database of
 * its own, and DATABASE_URL holding only the gateway's `platform` schema. Runs in both CI runs: without
 * DATABASE_URL it uses the machine's PostgreSQL (databases of its own, dropped after).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { AREA_NAMES, databaseUrl, databaseUrlVariable, inMemoryConfig, loadConfig } from '../../subgraphs/platform/config.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import { testDatabase } from '../support/database.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';
import { subscriptionsActive, wsClient } from '../support/subscriptions.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';
import { startReceiver, waitFor } from '../webhooks/receiver.ts';
import { dispatch, provision, roadsideToken, session } from '../roadside/helpers.ts';

const POSTGRES = process.env.DATABASE_URL ?? process.env.CI_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const SMI = '/shared-mobility-insights/v2';
const VIN = '1HGCM82633A004352';
const AREA_URL = 'postgres://u@db.example:5432/booking';

describe('configuration', () => {
  it('names a database variable for every area of the registry', () => {
    expect([...AREA_NAMES].sort()).toEqual(Object.keys(subgraphDefinitions).sort());
    expect(AREA_NAMES.map(databaseUrlVariable)).toEqual(
      ['BOOKING_DATABASE_URL', 'SCORING_DATABASE_URL', 'ROADSIDE_DATABASE_URL', 'REGISTRATION_DATABASE_URL', 'RISK_DATABASE_URL', 'WEBHOOKS_DATABASE_URL']);
  });

  it('opens an area on its own URL and everything else on DATABASE_URL', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://u@main:5432/fleet', BOOKING_DATABASE_URL: AREA_URL, RISK_DATABASE_URL: AREA_URL });
    expect(databaseUrl(config, 'booking')).toBe(AREA_URL);
    expect(databaseUrl(config, 'scoring')).toBe('postgres://u@main:5432/fleet');
    expect(databaseUrl(config, 'platform')).toBe('postgres://u@main:5432/fleet');
  });

  it('refuses an area database on the embedded default, and tools on in-memory PGlite ignore them', () => {
    expect(() => loadConfig({ BOOKING_DATABASE_URL: AREA_URL })).toThrow(/BOOKING_DATABASE_URL.*need DATABASE_URL \(PostgreSQL\) too/s);
    expect(() => loadConfig({ BOOKING_DATABASE_URL: 'mysql://u@db/booking', DATABASE_URL: 'postgres://u@main/fleet' })).toThrow(/BOOKING_DATABASE_URL/);
    const tool = inMemoryConfig({ DATABASE_URL: 'postgres://u@main/fleet', BOOKING_DATABASE_URL: AREA_URL });
    expect([tool.DATABASE_URL, databaseUrl(tool, 'booking'), tool.PGLITE_IN_MEMORY]).toEqual([undefined, undefined, true]);
  });
});

describe('every area in a database of its own', () => {
  let t: TestStack;
  let main: Awaited<ReturnType<typeof testDatabase>>;
  const areas: Record<string, Awaited<ReturnType<typeof testDatabase>>> = {};
  let bookingLink: Awaited<ReturnType<typeof tcpProxy>>;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  async function query<T extends pg.QueryResultRow>(url: string, sql: string, values: unknown[] = []) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<T>(sql, values)).rows;
    } finally {
      await client.end();
    }
  }
  /** The schemas a database holds, of the gateway's and the areas'. */
  const schemasIn = async (url: string) => (await query<{ name: string }>(url,
    'select nspname as name from pg_namespace where nspname = any($1) order by nspname', [['platform', ...AREA_NAMES]])).map((r) => r.name);

  beforeAll(async () => {
    main = await testDatabase(POSTGRES, 'areadb_main');
    for (const name of AREA_NAMES) areas[name] = await testDatabase(POSTGRES, `areadb_${name}`);
    // Booking's database behind a link the readiness test cuts.
    const bookingUrl = new URL(areas.booking!.env.DATABASE_URL!);
    bookingLink = await tcpProxy(bookingUrl.hostname, Number(bookingUrl.port || 5432));
    bookingUrl.host = `127.0.0.1:${bookingLink.port}`;
    const own = Object.fromEntries(AREA_NAMES.map((name) => [databaseUrlVariable(name), areas[name]!.env.DATABASE_URL!]));
    t = await startTestStack({
      label: 'areadb',
      env: {
        ...main.env, ...own, BOOKING_DATABASE_URL: bookingUrl.toString(),
        DB_CONNECT_TIMEOUT_MS: '1000', WEBHOOK_ALLOW_LOOPBACK: 'true', WEBHOOK_POLL_INTERVAL_MS: '50',
      },
    });
    receiver = await startReceiver();
    // The Risk Index data load into risk's own database in the background.
    await waitFor(async () => (await t.request('GET', '/readyz')).status === 200, 120_000, 'the stack to be ready');
  }, 180_000);

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await bookingLink?.close();
    await Promise.all([main, ...Object.values(areas)].map((db) => db?.drop()));
  });

  it('keeps each area\'s schema in its database and only the gateway\'s in DATABASE_URL', async () => {
    expect(await schemasIn(main.env.DATABASE_URL!)).toEqual(['platform']);
    for (const name of AREA_NAMES) expect(await schemasIn(areas[name]!.env.DATABASE_URL!)).toEqual([name]);
  });

  it('takes a REST write and answers a GraphQL read in every area, through the gateway', async () => {
    const ok = async (method: string, path: string, body?: unknown, token = t.token) => {
      const res = await t.request(method, path, { token, body });
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
      return res.body;
    };
    const hook = await ok('POST', '/platform/webhooks/v1/subscriptions', { url: `${receiver.url}/hooks`, eventTypes: ['booking.started'] });
    await ok('POST', `${SMI}/users`, { userID: 'driver-1' });
    await ok('POST', `${SMI}/vehicles`, { VIN, deviceID: '356938035643809' });
    await ok('POST', `${SMI}/bookings`, { bookingID: 'b-1', VIN, userID: 'driver-1', startTimestamp: 1795000000 });
    const roadside = (await roadsideToken(t)).body.access_token as string;
    const member = await provision(t, roadside);
    const rescue = await dispatch(t, roadside, await session(t, roadside, [{ key: 'vin', value: member.vin }]));
    expect(rescue.status).toBe(201);
    await ok('POST', '/registration/v2/users', { userId: 'reg-1' });
    // The Risk Index takes no writes: its data were loaded into its database at start; REST reads them.
    const risk = await t.request('GET', '/riskIndex/v1/riskInfo?geometry=LINESTRING(-87.6766%2041.8813,-87.6718%2041.8814)&radius=0.002');
    expect(risk.status).toBe(200);

    const read = await t.graphql(`query($reqId: ID!, $wkt: WKT!) {
      user(userId: "driver-1") { userId bookings { nodes { bookingId vehicle { vin deviceId } } } }
      rescue(reqId: $reqId) { reqId status }
      registeredUser(userId: "reg-1") { userId }
      riskIndex(wkt: $wkt, radius: 0.002) { area { dataStatus } riskInfo { index } }
      webhookSubscriptions { id eventTypes } }`,
    { reqId: rescue.body.requestId, wkt: 'LINESTRING(-87.6766 41.8813,-87.6718 41.8814)' });
    expect(read.errors).toBeUndefined();
    expect(read.data.user).toEqual({ userId: 'driver-1', bookings: { nodes: [{ bookingId: 'b-1', vehicle: { vin: VIN, deviceId: '356938035643809' } }] } });
    expect(read.data.rescue).toEqual({ reqId: rescue.body.requestId, status: expect.any(String) });
    expect(read.data.registeredUser).toEqual({ userId: 'reg-1' });
    expect(read.data.riskIndex.riskInfo.index).toEqual(expect.any(Number));
    expect(read.data.webhookSubscriptions).toEqual([{ id: hook.id, eventTypes: ['BOOKING_STARTED'] }]);

    // booking's outbox (its database) to webhooks' deliveries (another database), signed, to the receiver.
    const delivered = await waitFor(() => receiver.received.find((r) => r.json.type === 'booking.started'), 15_000, 'the booking.started delivery');
    expect(new Webhook(hook.secret).verify(delivered.body, delivered.headers as Record<string, string>)).toMatchObject({ data: { path: `${SMI}/bookings/b-1` } });
  });

  it('pushes a subscription the events of an area in a database of its own', async () => {
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    const watching = ws.subscribe('subscription { bookingUpdated(bookingId: "b-1") { bookingId status } }');
    await subscriptionsActive(t.stack.gateway, 1);
    const ended = await t.request('PUT', `${SMI}/bookings/b-1`, { token: t.token, body: { actualEndTimestamp: 1795003600 } });
    expect(ended.status).toBe(200);
    expect((await watching.nth(1)).data.bookingUpdated).toEqual({ bookingId: 'b-1', status: 'ENDED' });
    ws.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });

  it('is not ready while one area\'s database is unreachable, naming that area only, and ready again once it is back', async () => {
    // Cut once the relay's last transaction on booking's database is over: a transaction whose connection dies leaks its pooled
    // client in Kysely 0.29 (kysely-org/kysely#1990: rollback throws before the release), which would hang the stack's close.
    await waitFor(async () => (await query<{ n: number }>(areas.booking!.env.DATABASE_URL!, 'select count(*)::int as n from booking.webhook_outbox'))[0]!.n === 0,
      15_000, 'booking\'s outbox relayed');
    bookingLink.cut();
    try {
      const res = await t.request('GET', '/readyz');
      expect(res.status).toBe(503);
      expect(res.body.checks).toEqual({ database: true, ...Object.fromEntries(AREA_NAMES.map((name) => [name, name !== 'booking'])) });
      const other = await t.graphql('{ registeredUser(userId: "reg-1") { userId } }');
      expect(other.data.registeredUser).toEqual({ userId: 'reg-1' });
    } finally {
      bookingLink.restore();
    }
    await waitFor(async () => (await t.request('GET', '/readyz')).status === 200, 15_000, 'ready again');
  });
});
