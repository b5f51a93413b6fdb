import Fastify from 'fastify';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import type { PgliteConnection } from '@mikro-orm/pglite';
import type { Database } from '../../subgraphs/platform/db/orm.ts';
import { SMI_PREFIX } from '../../gateway/rest/users.ts';

interface UserRow { user_id: string; date_of_birth: string | null; home_zip: string | null; enrollment_status: string; created_at: Date | string; updated_at: Date | string }

// pg parses timestamptz into a Date; the PGlite instance MikroORM created keeps the text.
const iso = (value: Date | string) => (typeof value === 'string' ? new Date(value) : value).toISOString();

const LOOKUP = 'select user_id, date_of_birth, home_zip, enrollment_status, created_at, updated_at from scoring.users where org_id = $1 and user_id = $2';

/**
 * The physical limit the issue measures against: a minimal Fastify + driver server doing the same
 * indexed lookup as `GET /shared-mobility-insights/v2/users/{userId}` and answering the same JSON.
 * No token, no GraphQL, no ORM: one query on the scoring subgraph's own database (its PGlite
 * instance on the embedded run, a `pg` pool of its own on PostgreSQL), for the bench client's
 * organisation.
 */
export async function startBareServer(scoring: Database, org: string, databaseUrl?: string) {
  let statements = 0;
  let query: (sql: string, params: unknown[]) => Promise<UserRow[]>;
  let close = async () => undefined as void;
  if (databaseUrl) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    query = async (sql, params) => (await pool.query<UserRow>(sql, params)).rows;
    close = () => pool.end();
  } else {
    const pglite = await (scoring.orm.em.getConnection() as PgliteConnection).getNativeClient() as PGlite;
    query = async (sql, params) => (await pglite.query<UserRow>(sql, params)).rows;
  }
  const app = Fastify({ logger: false });
  app.get<{ Params: { userId: string } }>(`${SMI_PREFIX}/users/:userId`, async (request, reply) => {
    statements += 1;
    const [row] = await query(LOOKUP, [org, request.params.userId]);
    if (!row) return reply.code(404).send({ status: 404, code: 'NOT_FOUND' });
    return {
      userId: row.user_id, userID: row.user_id, dateOfBirth: row.date_of_birth, homeZip: row.home_zip,
      enrollmentStatus: row.enrollment_status, createdAt: iso(row.created_at), updatedAt: iso(row.updated_at),
    };
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    url,
    statements: { get count() { return statements; }, reset() { statements = 0; } },
    async stop() { await app.close(); await close(); },
  };
}
