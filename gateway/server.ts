/** Starts the gateway and (embedded default) every subgraph not given a <NAME>_URL; with WORKERS>1, that many processes. */
import cluster from 'node:cluster';
import type { AddressInfo } from 'node:net';
import { loadConfig, type Config } from '../subgraphs/platform/config.ts';
import { onShutdown } from '../subgraphs/platform/shutdown.ts';
import { SCOPES } from '../subgraphs/platform/auth/tokens.ts';
import { buildStack } from './stack.ts';
import { refuseCleanly } from '../subgraphs/platform/start-refused.ts';
import { runCluster } from './cluster.ts';
import { releaseStartUpMemory } from '../subgraphs/platform/start-up-memory.ts';
import { baseUrl, developmentClientLines, startBanner } from './home.ts';
import { reportToPrimary, serveMetrics } from './observability/metrics-server.ts';

async function serve(config: Config) {
  if (cluster.isWorker) reportToPrimary();
  const stack = await refuseCleanly(() => buildStack(config));
  const { app, clients, metrics } = stack.gateway;
  // Made on the first start of an empty database; its secret is printed only here.
  const dev = !config.BOOTSTRAP_CLIENT_ID && (await clients.count()) === 0 ? await clients.create(config.BOOTSTRAP_ORG, [...SCOPES]) : undefined;
  if (cluster.isWorker) reportToPrimary(metrics.registry);
  const metricsServer = cluster.isPrimary ? await refuseCleanly(() => serveMetrics(metrics.registry, config)) : undefined;
  releaseStartUpMemory();
  await app.listen({ host: config.HOST, port: config.PORT }).catch((error: unknown) => {
    if (dev) process.stdout.write(developmentClientLines(dev));
    throw error;
  });
  onShutdown(app.log, async () => {
    metricsServer?.close();
    await stack.close();
  });
  // With WORKERS>1 the first worker (the one that may make the development client) speaks for all.
  if (!cluster.isWorker || cluster.worker?.id === 1) process.stdout.write(startBanner(baseUrl(app.server.address() as AddressInfo), dev));
}

const config = loadConfig();
if (config.WORKERS > 1 && cluster.isPrimary) await runCluster(config);
else await serve(config);
