/** Starts the gateway and (embedded default) every subgraph not given a <NAME>_URL; with WORKERS>1, that many processes. */
import cluster from 'node:cluster';
import { loadConfig, type Config } from '../subgraphs/platform/config.ts';
import { onShutdown } from '../subgraphs/platform/shutdown.ts';
import { SCOPES } from '../subgraphs/platform/auth/tokens.ts';
import { buildStack } from './stack.ts';
import { refuseCleanly } from '../subgraphs/platform/start-refused.ts';
import { runCluster } from './cluster.ts';
import { reportToPrimary, serveMetrics } from './observability/metrics-server.ts';

async function serve(config: Config) {
  if (cluster.isWorker) reportToPrimary();
  const stack = await refuseCleanly(() => buildStack(config));
  const { app, clients, metrics } = stack.gateway;
  if (!config.BOOTSTRAP_CLIENT_ID && (await clients.count()) === 0) {
    const dev = await clients.create(config.BOOTSTRAP_ORG, [...SCOPES]);
    // Printed once, on the first start of an empty database: the only copy of the secret.
    process.stdout.write(`\nDevelopment client created (organisation '${dev.organisation}'; the secret is shown only now; it may request scope=admin to manage clients):\n` +
      `  client_id:     ${dev.clientId}\n  client_secret: ${dev.clientSecret}\n\n`);
  }
  if (cluster.isWorker) reportToPrimary(metrics.registry);
  const metricsServer = cluster.isPrimary ? await refuseCleanly(() => serveMetrics(metrics.registry, config)) : undefined;
  await app.listen({ host: config.HOST, port: config.PORT });
  onShutdown(app.log, async () => {
    metricsServer?.close();
    await stack.close();
  });
}

const config = loadConfig();
if (config.WORKERS > 1 && cluster.isPrimary) await runCluster(config);
else await serve(config);
