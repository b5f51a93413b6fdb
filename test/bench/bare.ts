import Fastify from 'fastify';
import pg from 'pg';
import type { Statements } from '../../subgraphs/platform/db/pglite-thread.ts';
import type { PgliteConnection } from '@mikro-orm/pglite';
import type { Database } from '../../subgraphs/platform/db/orm.ts';
import { SMI_PREFIX } from '../../subgraphs/scoring/rest-users.ts';
import { crossQuery } from './scenarios.ts';

interface UserRow { user_id: string; date_of_birth: string | null; home_zip: string | null; enrollment_status: string; created_at: Date | string; updated_at: Date | string }

// pg parses timestamptz into a Date; the PGlite instance MikroORM created keeps the text.
const iso = (value: Date | string) => (typeof value === 'string' ? new Date(value) : value).toISOString();

const LOOKUP = 'select user_id, date_of_birth, home_zip, enrollment_status, created_at, updated_at from scoring.users where org_id = $1 and user_id = $2';

/** The cross-subgraph query of scenario `cross`: the one document the bare twin answers. */
const CROSS_QUERY = crossQuery('');

interface BookingRow { booking_id: string; start_timestamp: string | number; actual_end_timestamp: string | number | null; vin: string | null; device_id: string | null }

// The reads our stack makes for CROSS_QUERY: the user (LOOKUP, the whole row as our loader reads it), then one page of their bookings with each one's vehicle.
const CROSS_BOOKINGS = 'select b.booking_id, b.start_timestamp, b.actual_end_timestamp, v.vin, v.device_id from booking.bookings as b'
  + ' left join booking.vehicles as v on v.org_id = b.org_id and v.vin = b.vin'
  + ' where b.org_id = $1 and b.user_id = $2 order by b.start_timestamp desc, b.booking_id desc limit 20';

/**
 * The physical limit the issue measures against: a minimal Fastify + driver server doing the same
 * indexed lookup as `GET /shared-mobility-insights/v2/users/{userId}` and answering the same JSON.
 * No token, no GraphQL, no ORM: one query on the scoring subgraph's own database (its PGlite
 * instance on the embedded run, a `pg` pool of its own on PostgreSQL), for the bench client's
 * organisation. `POST /graphql` is the cross query's twin: the same reads, the same answer (CROSS_QUERY).
 */
export async function startBareServer(scoring: Database, org: string, databaseUrl?: string) {
  let statements = 0;
  let query: <Row>(sql: string, params: unknown[]) => Promise<Row[]>;
  let close = async () => undefined as void;
  if (databaseUrl) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    query = async <Row>(sql: string, params: unknown[]) => (await pool.query(sql, params)).rows as Row[];
    close = () => pool.end();
  } else {
    const pglite = await (scoring.orm.em.getConnection() as PgliteConnection).getNativeClient() as Statements;
    query = async <Row>(sql: string, params: unknown[]) => (await pglite.query<Row>(sql, params)).rows;
  }
  const app = Fastify({ logger: false });
  app.get<{ Params: { userId: string } }>(`${SMI_PREFIX}/users/:userId`, async (request, reply) => {
    statements += 1;
    const [row] = await query<UserRow>(LOOKUP, [org, request.params.userId]);
    if (!row) return reply.code(404).send({ status: 404, code: 'NOT_FOUND' });
    return {
      userId: row.user_id, userID: row.user_id, dateOfBirth: row.date_of_birth, homeZip: row.home_zip,
      enrollmentStatus: row.enrollment_status, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at),
    };
  });
  // The cross query's twin: the same reads as our stack (two statements, one after the other) and
  // the same JSON answer, with no GraphQL, no federation, no ORM. Any other document is refused.
  app.post<{ Body: { query?: string; variables?: { id?: string } } }>('/graphql', async (request, reply) => {
    const userId = request.body?.variables?.id;
    if (request.body?.query !== CROSS_QUERY || typeof userId !== 'string') return reply.code(400).send({ errors: [{ message: 'the bare twin answers only the cross query' }] });
    statements += 1;
    const [user] = await query<UserRow>(LOOKUP, [org, userId]);
    if (!user) return { data: { user: null } };
    statements += 1;
    const bookings = await query<BookingRow>(CROSS_BOOKINGS, [org, userId]);
    return {
      data: {
        user: {
          userId: user.user_id, homeZip: user.home_zip, enrollmentStatus: user.enrollment_status.toUpperCase(),
          bookings: {
            nodes: bookings.map((b) => ({
              bookingId: b.booking_id, startTimestamp: Number(b.start_timestamp), status: b.actual_end_timestamp === null ? 'ACTIVE' : 'ENDED',
              vehicle: b.vin === null ? null : { vin: b.vin, deviceId: b.device_id },
            })),
          },
        },
      },
    };
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    statements: { get count() { return statements; }, reset() { statements = 0; } },
    async stop() { await app.close(); await close(); },
  };
}
