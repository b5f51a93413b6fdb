/**
 * METRICS_PORT: `GET /metrics` on a port of its own, off the public one. One process serves its own
 * registry; with WORKERS>1 the node:cluster primary serves every worker's added up by prom-client's
 * AggregatorRegistry, each metric by its `aggregator` (counters and histograms summed, see metrics.ts).
 */
import { createServer, type Server } from 'node:http';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Config } from '../../subgraphs/platform/config.ts';
import { StartRefused } from '../../subgraphs/platform/start-refused.ts';
import { METRICS_PATH } from './metrics.ts';

export interface MetricsSource {
  contentType: string;
  metrics(): Promise<string>;
}

/** Listens on METRICS_HOST (default HOST) and METRICS_PORT, when set; a port that cannot be had refuses the start. */
export async function serveMetrics(source: MetricsSource, config: Config): Promise<Server | undefined> {
  const port = config.METRICS_PORT;
  if (!port) return undefined;
  const host = config.METRICS_HOST ?? config.HOST;
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if ((request.method !== 'GET' && request.method !== 'HEAD') || path !== METRICS_PATH) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`Only GET ${METRICS_PATH} here\n`);
      return;
    }
    source.metrics().then(
      (text) => response.writeHead(200, { 'content-type': source.contentType }).end(text),
      // A worker that does not answer within prom-client's 5 s fails the whole scrape: no partial sums.
      (error: Error) => response.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end(`Metrics unavailable: ${error.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(new StartRefused(`METRICS_PORT ${port} on ${host}: ${error.code ?? error.message}`)));
    server.listen(port, host, resolve);
  });
  return server;
}

/** In the primary of a cluster: every worker's metrics, added up on each scrape. */
export function clusterMetricsSource(): MetricsSource {
  const aggregator = new AggregatorRegistry();
  return { contentType: aggregator.contentType, metrics: () => aggregator.clusterMetrics() };
}

/**
 * In a cluster worker: answer the primary's requests with these registries' metrics. Called with
 * none at once, so that a worker still starting answers with nothing instead of failing the scrape.
 */
export function reportToPrimary(...registries: Registry[]): void {
  // Constructing one is what attaches prom-client's listener for the primary's requests.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries(registries);
}
