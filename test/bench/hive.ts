import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { supergraphPath } from '../../schema/subgraphs.ts';
import { signedHopHeaders } from '../../subgraphs/platform/internal-hop.ts';
import type { InternalAuthorizer } from './internal-authorization.ts';

/** What this file uses of Hive Gateway's API (`@graphql-hive/gateway-runtime` 2.x). */
interface FetchInit { method?: string; headers?: Record<string, string>; body?: unknown }
interface HiveGatewayConfig {
  supergraph: string;
  unifiedGraphHandler: unknown;
  transports: Record<string, unknown>;
  transportEntries?: Record<string, { options: { deduplicateInflightRequests: boolean } }>;
  propagateHeaders: { fromClientToSubgraphs(payload: { request: Request }): Record<string, string | null> };
  plugins(): { onFetch(payload: { url: string; options: FetchInit; setOptions(options: FetchInit): void }): Promise<void> }[];
  logging: 'error';
}
type HiveGateway = ((request: IncomingMessage, response: ServerResponse) => void) & { dispose(): Promise<void> | void };

/**
 * Loaded by a name the type checker does not follow: the packages' type declarations pull in the DOM
 * library (through @whatwg-node/fetch), whose globals would replace Node's in the whole project's typecheck.
 */
async function loadHive() {
  const [runtime, router, http] = await Promise.all(['@graphql-hive/gateway-runtime', '@graphql-hive/router-runtime', '@graphql-mesh/transport-http']
    .map((name): Promise<Record<string, unknown>> => import(name)));
  return {
    createGatewayRuntime: runtime.createGatewayRuntime as (config: HiveGatewayConfig) => HiveGateway,
    unifiedGraphHandler: router.unifiedGraphHandler,
    http: http.default,
  };
}

/** The committed supergraph with each subgraph's routing URL replaced by the one given for it. */
export function routedSupergraph(urls: Record<string, string>) {
  return readFileSync(supergraphPath, 'utf8').replace(/@join__graph\(name: "([^"]+)", url: "[^"]*"\)/g,
    (declaration, name: string) => (urls[name] ? `@join__graph(name: "${name}", url: "${urls[name]}")` : declaration));
}

/**
 * Hive Gateway (`@graphql-hive/gateway-runtime`) with its Rust query planner
 * (`@graphql-hive/router-runtime`) on the committed supergraph, its routing URLs overridden to the
 * same subgraphs as ours, served by node:http on loopback. Its defaults, in-flight subgraph request
 * de-duplication among them, unless `deduplicate` is false. The caller's token is propagated
 * (`propagateHeaders`), and an `onFetch` plugin replaces it with the internal token for its caller
 * and that subgraph and signs every subgraph request with the internal hop, as our gateway does
 * (user plugins run after Hive's own, so the request id it adds is signed too).
 */
export async function startHiveGateway(urls: Record<string, string>, authorize: InternalAuthorizer, hopKey: string, { deduplicate = true } = {}) {
  const subgraphOf = new Map(Object.entries(urls).map(([name, url]) => [url, name]));
  const { createGatewayRuntime, unifiedGraphHandler, http } = await loadHive();
  const gateway = createGatewayRuntime({
    supergraph: routedSupergraph(urls),
    unifiedGraphHandler,
    transports: { http },
    ...(deduplicate ? {} : { transportEntries: { '*.http': { options: { deduplicateInflightRequests: false } } } }),
    propagateHeaders: { fromClientToSubgraphs: ({ request }) => ({ authorization: request.headers.get('authorization') }) },
    plugins: () => [{
      async onFetch({ url, options, setOptions }) {
        const { authorization: given, ...headers } = options.headers ?? {};
        const authorization = await authorize(given, subgraphOf.get(url) ?? '');
        const internal = { ...options, headers: { ...headers, ...(authorization ? { authorization } : {}) } };
        setOptions({ ...options, headers: signedHopHeaders(hopKey, url, internal) });
      },
    }],
    logging: 'error',
  });
  const server = createServer(gateway);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await gateway.dispose();
    },
  };
}
