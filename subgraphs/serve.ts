/** Runs one subgraph on its own (docker compose): `node subgraphs/serve.ts <name>` or SUBGRAPH=<name>. */
import { loadConfig } from './platform/config.ts';
import { buildSubgraph } from './platform/subgraph.ts';
import { onShutdown } from './platform/shutdown.ts';
import { subgraphDefinitions } from './index.ts';
import { refuseCleanly } from './platform/start-refused.ts';
import { openProcessEventBus } from './platform/events/open.ts';
import { EVENT_SOURCES } from './events.ts';

const name = process.argv[2] ?? process.env.SUBGRAPH;
const definition = name ? subgraphDefinitions[name] : undefined;
if (!definition) {
  console.error(`Usage: node subgraphs/serve.ts <${Object.keys(subgraphDefinitions).join('|')}>`);
  process.exit(2);
}
const config = loadConfig();
if (!config.INTERNAL_HOP_KEY) {
  console.error(`INTERNAL_HOP_KEY is not set: a subgraph that listens accepts only requests the gateway signs with this shared key (at least 32 characters, the same value for the gateway and every subgraph; \`npm run keys\` prints one).`);
  process.exit(2);
}
if (!config.DATABASE_URL) {
  console.error('DATABASE_URL is not set: a subgraph runs on its own only on PostgreSQL. On the embedded default, `npm start` runs every subgraph inside the gateway.');
  process.exit(2);
}
if (!config.NATS_URL && (EVENT_SOURCES.includes(definition.name) || definition.worker)) {
  console.error(`NATS_URL is not set: subgraph ${definition.name} running on its own ${definition.worker ? 'consumes' : 'publishes'} committed events through NATS JetStream, which carries them between processes. On the embedded default, \`npm start\` runs every subgraph inside the gateway.`);
  process.exit(2);
}
const bus = await refuseCleanly(() => openProcessEventBus(config));
const subgraph = await refuseCleanly(() => buildSubgraph(definition, config));
await subgraph.startWorker({}, bus);
subgraph.startRelay(bus);
await subgraph.app.listen({ host: config.HOST, port: config.PORT });
onShutdown(subgraph.app.log, async () => {
  await subgraph.close();
  await bus.close();
});
