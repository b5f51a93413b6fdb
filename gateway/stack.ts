import type { Config } from '../subgraphs/platform/config.ts';
import { openDatabase } from '../subgraphs/platform/db/orm.ts';
import { buildSubgraph, type Subgraph } from '../subgraphs/platform/subgraph.ts';
import { subgraphDefinitions } from '../subgraphs/index.ts';
import { subgraphUrlVariable } from '../subgraphs/platform/config.ts';
import { buildGateway, type Gateway } from './app.ts';
import { parseScopes } from './auth/clients.ts';
import { SCOPES } from '../subgraphs/platform/auth/tokens.ts';

export interface Stack {
  gateway: Gateway;
  subgraphs: Subgraph[];
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
    for (const [name, definition] of Object.entries(subgraphDefinitions)) {
      const remote = env[subgraphUrlVariable(name)];
      if (remote) { urls[name] = remote; continue; }
      const subgraph = await buildSubgraph(definition, config);
      subgraphs.push(subgraph);
      const address = await subgraph.app.listen({ host: '127.0.0.1', port: 0 });
      urls[name] = `${address}/graphql`;
    }
    const db = await openDatabase(config, { name: 'platform', entities: [(await import('./auth/clients.ts')).Client], migrationsPath: GATEWAY_MIGRATIONS });
    const gateway = await buildGateway({ config, db, subgraphUrls: urls });
    if (config.BOOTSTRAP_CLIENT_ID && config.BOOTSTRAP_CLIENT_SECRET) {
      await gateway.clients.ensure(config.BOOTSTRAP_CLIENT_ID, config.BOOTSTRAP_CLIENT_SECRET, config.BOOTSTRAP_ORG, parseScopes([...SCOPES]));
    }
    return {
      gateway, subgraphs,
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
