import pg from 'pg';
import { databaseUrl, type Config } from '../../subgraphs/platform/config.ts';
import { runner, type Run } from '../../subgraphs/platform/db/run.ts';
import type { Database } from '../../subgraphs/platform/db/orm.ts';
import type { EventHistory } from '../../subgraphs/platform/events/history.ts';
import { subgraphDefinitions } from '../../subgraphs/index.ts';

type Bound<F> = F extends (run: Run, ...rest: infer A) => infer R ? (...rest: A) => R : never;
/** The event history's reads (EventHistory) on the database of the area that keeps it. */
export type HistoryReader = { [K in keyof EventHistory]: Bound<EventHistory[K]> };

/** Connections the gateway holds on a remote history area's database: replays are short keyed reads. */
const REMOTE_POOL_MAX = 2;

/** `?` placeholders (as Run takes them) as node-postgres's `$n`; the history's statements hold no other. */
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/**
 * The reads of the area that declares SubgraphDefinition.eventHistory (the webhooks area), on its
 * database: the local subgraph's when it runs in this process (the embedded default), else a small
 * pool on that area's PostgreSQL database (`<NAME>_DATABASE_URL`, else DATABASE_URL). Undefined when
 * no area keeps a history, or a remote one has no database the gateway can reach.
 */
export function openHistoryReader(
  config: Config, local: Record<string, Database>,
): { reader: HistoryReader; close(): Promise<void> } | undefined {
  const owner = Object.entries(subgraphDefinitions).find(([, definition]) => definition.eventHistory);
  if (!owner) return undefined;
  const [name, { eventHistory }] = owner;
  const bind = (run: Run): HistoryReader => ({
    find: (orgId, id) => eventHistory!.find(run, orgId, id),
    oldest: (orgId, resourceKey) => eventHistory!.oldest(run, orgId, resourceKey),
    after: (query) => eventHistory!.after(run, query),
  });
  if (local[name]) return { reader: bind(runner(local[name])), close: async () => undefined };
  const url = databaseUrl(config, name);
  if (!url) return undefined;
  const pool = new pg.Pool({
    connectionString: url, max: REMOTE_POOL_MAX,
    connectionTimeoutMillis: config.DB_CONNECT_TIMEOUT_MS, query_timeout: config.DB_QUERY_TIMEOUT_MS,
  });
  // An idle connection the server dropped: the pool replaces it; the next read reports anything lasting.
  pool.on('error', () => undefined);
  const run: Run = async (sql, params = []) => (await pool.query(numbered(sql), params)).rows;
  return { reader: bind(run), close: () => pool.end() };
}
