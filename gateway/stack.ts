import type { Config } from '../subgraphs/platform/config.ts';
import { openDatabase, type Database } from '../subgraphs/platform/db/orm.ts';
import { buildSubgraph, type Subgraph } from '../subgraphs/platform/subgraph.ts';
import { subgraphDefinitions } from '../subgraphs/index.ts';
import { subgraphUrlVariable } from '../subgraphs/platform/config.ts';
import { buildGateway, type Gateway, type GatewayOptions } from './app.ts';
import { Client, parseScopes } from './auth/clients.ts';
import { IdempotencyRecord } from './idempotency/entity.ts';
import { SandboxOrganisation } from './sandbox/organisations.ts';
import { IssuerRegistration } from './auth/issuers.ts';
import { TRUSTED_DOCUMENT_ENTITIES } from './trusted/entities.ts';
import { SCOPES } from '../subgraphs/platform/auth/tokens.ts';
import { generateHopKey } from '../subgraphs/platform/internal-hop.ts';
import { clientStatusFromDatabase, revocationCheck, type RevocationCheck } from './auth/revocation.ts';
import type { EventBus } from '../subgraphs/platform/events/bus.ts';
import { openProcessEventBus } from '../subgraphs/platform/events/open.ts';
import { openHistoryReader } from './subscriptions/history-access.ts';

export interface Stack {
  gateway: Gateway;
  subgraphs: Subgraph[];
  /** The gateway's own database (API clients). */
  db: Database;
  /** The gateway's revocation check of client tokens. */
  revocation: RevocationCheck;
  /** The process's event bus: the local areas' relays publish on it, the webhooks worker and the subscriptions consume it. */
  bus: EventBus;
  /** GraphQL URL of each subgraph reached over HTTP, by name: remote ones, and local ones with SUBGRAPH_TRANSPORT=http. */
  subgraphUrls: Record<string, string>;
  close(): Promise<void>;
}

export const GATEWAY_MIGRATIONS = new URL('./migrations', import.meta.url).pathname;
/** The gateway's own tables: API clients, trusted OpenID Connect issuers, stored idempotent responses and trusted documents. */
export const GATEWAY_ENTITIES = [Client, SandboxOrganisation, IssuerRegistration, IdempotencyRecord, ...TRUSTED_DOCUMENT_ENTITIES];

/** The gateway's internal delays that tests shorten. */
export type StackTuning = Pick<GatewayOptions, 'reservationUnopenedMs'>;

/**
 * The gateway and, for every subgraph without a <NAME>_URL, that subgraph in this process (the
 * embedded default), executed in-process: no subgraph port is opened. With SUBGRAPH_TRANSPORT=http
 * (benchmarks) the local subgraphs listen on ephemeral loopback ports instead, behind the signed
 * internal hop like remote ones. Nothing listens on the gateway port yet. `tuning`: see StackTuning.
 */
export async function buildStack(given: Config, env: NodeJS.ProcessEnv = process.env, tuning: StackTuning = {}): Promise<Stack> {
  const subgraphs: Subgraph[] = [];
  const urls: Record<string, string> = {};
  const remote = Object.keys(subgraphDefinitions).filter((name) => env[subgraphUrlVariable(name)]);
  if (remote.length && !given.INTERNAL_HOP_KEY) {
    throw new Error(`INTERNAL_HOP_KEY is required: ${remote.map(subgraphUrlVariable).join(', ')} point at subgraphs that accept only requests signed with the key they share with the gateway`);
  }
  // Local subgraphs share this process's memory, so a key of its own does when none is configured.
  const config: Config = { ...given, INTERNAL_HOP_KEY: given.INTERNAL_HOP_KEY ?? generateHopKey() };
  const bus = await openProcessEventBus(config);
  // First: it takes the embedded data folder's lock.
  const db = await openDatabase(config, { name: 'platform', entities: GATEWAY_ENTITIES, migrationsPath: GATEWAY_MIGRATIONS })
    .catch(async (error: unknown) => { await bus.close(); throw error; });
  const revocation = revocationCheck(clientStatusFromDatabase(db.orm.em));
  try {
    for (const name of remote) urls[name] = env[subgraphUrlVariable(name)]!;
    const local = Object.entries(subgraphDefinitions).filter(([name]) => !remote.includes(name));
    // Built side by side: most of a subgraph's start-up is waiting on its database.
    const built = await Promise.allSettled(local.map(async ([name, definition]) => {
      const subgraph = await buildSubgraph(definition, config);
      subgraphs.push(subgraph);
      if (config.SUBGRAPH_TRANSPORT === 'http') urls[name] = `${await subgraph.app.listen({ host: '127.0.0.1', port: 0 })}/graphql`;
    }));
    const failure = built.find((r) => r.status === 'rejected');
    if (failure) throw failure.reason;
    const databases = Object.fromEntries(subgraphs.map((s) => [s.name, s.db]));
    await Promise.all(subgraphs.map((subgraph) => subgraph.startWorker(databases, bus)));
    // After the workers' consumers: the in-process bus hands each event to the consumers registered then.
    for (const subgraph of subgraphs) subgraph.startRelay(bus);
    const localSubgraphs = config.SUBGRAPH_TRANSPORT === 'inprocess' ? subgraphs : [];
    const publicAnswers = subgraphs.find((s) => s.answers)?.answers;
    const history = openHistoryReader(config, databases);
    const gateway = await buildGateway({
      ...tuning, config, db, revocation, subgraphUrls: urls, localSubgraphs, publicAnswers, bus,
      history: history?.reader,
    }).catch(async (error: unknown) => { await history?.close(); throw error; });
    if (config.BOOTSTRAP_CLIENT_ID && config.BOOTSTRAP_CLIENT_SECRET) {
      await gateway.clients.ensure(config.BOOTSTRAP_CLIENT_ID, config.BOOTSTRAP_CLIENT_SECRET, config.BOOTSTRAP_ORG, parseScopes([...SCOPES]));
    }
    return {
      gateway, subgraphs, db, revocation, bus, subgraphUrls: urls,
      async close() {
        await gateway.close();
        await history?.close();
        await db.close();
        await Promise.all(subgraphs.map((s) => s.close()));
        await bus.close();
      },
    };
  } catch (error) {
    await Promise.all(subgraphs.map((s) => s.close()));
    await db.close();
    await bus.close();
    throw error;
  }
}
