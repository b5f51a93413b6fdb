import type { Config } from '../subgraphs/platform/config.ts';
import { openDatabase, type Database } from '../subgraphs/platform/db/orm.ts';
import { buildSubgraph, type Subgraph } from '../subgraphs/platform/subgraph.ts';
import { subgraphDefinitions } from '../subgraphs/index.ts';
import { subgraphUrlVariable } from '../subgraphs/platform/config.ts';
import { buildGateway, type Gateway } from './app.ts';
import { parseScopes } from './auth/clients.ts';
import { SCOPES } from '../subgraphs/platform/auth/tokens.ts';

export interface Stack {
  gateway: Gateway;
  subgraphs: Subgraph[];
  /** The gateway's own database (API clients). */
  db: Database;
  /** GraphQL URL of each subgraph, by name (in-process ones listen on loopback). */
  subgraphUrls: Record<string, string>;
  close(): Promise<void>;
}

export const GATEWAY_MIGRATIONS = new URL('./migrations', import.meta.url).pathname;

/**
 * The gateway and, for every subgraph without a <NAME>_URL, that subgraph in this process on an
 * ephemeral loopback port (the embedded default). Nothing listens on the gateway port yet.
 */
export async function buildStack(config: Config, env: NodeJS.ProcessEnv = process.env): Promise<Stack> {
  const subgraphs: Subgraph[] = [];
  const urls: Record<string, string> = {};
  try {
    const local = Object.entries(subgraphDefinitions).filter(([name]) => {
      const remote = env[subgraphUrlVariable(name)];
      if (remote) urls[name] = remote;
      return !remote;
    });
    // Built side by side: most of a subgraph's start-up is waiting on its database.
    const built = await Promise.allSettled(local.map(async ([name, definition]) => {
      const subgraph = await buildSubgraph(definition, config);
      subgraphs.push(subgraph);
      urls[name] = `${await subgraph.app.listen({ host: '127.0.0.1', port: 0 })}/graphql`;
    }));
    const failure = built.find((r) => r.status === 'rejected');
    if (failure) throw failure.reason;
    const db = await openDatabase(config, { name: 'platform', entities: [(await import('./auth/clients.ts')).Client], migrationsPath: GATEWAY_MIGRATIONS });
    const localSubgraphs = config.SUBGRAPH_TRANSPORT === 'inprocess' ? subgraphs : [];
    const gateway = await buildGateway({ config, db, subgraphUrls: urls, localSubgraphs });
    if (config.BOOTSTRAP_CLIENT_ID && config.BOOTSTRAP_CLIENT_SECRET) {
      await gateway.clients.ensure(config.BOOTSTRAP_CLIENT_ID, config.BOOTSTRAP_CLIENT_SECRET, config.BOOTSTRAP_ORG, parseScopes([...SCOPES]));
    }
    return {
      gateway, subgraphs, db, subgraphUrls: urls,
      async close() {
        await gateway.close();
        await db.close();
        await Promise.all(subgraphs.map((s) => s.close()));
      },
    };
  } catch (error) {
    await Promise.all(subgraphs.map((s) => s.close()));
    throw error;
  }
}
