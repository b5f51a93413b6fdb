import { readFileSync } from 'node:fs';
import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { Subgraph } from '../subgraphs/platform/subgraph.ts';
import { InProcessDataSource, internalAuthorization, keepAliveFetcher } from './datasources.ts';
import type { Caller } from '../subgraphs/platform/auth/tokens.ts';
import type { InternalTokenMinter } from '../subgraphs/platform/auth/internal-token.ts';
import { REQUEST_ID_HEADER } from '../subgraphs/platform/log.ts';
import { signingFetcher } from '../subgraphs/platform/internal-hop.ts';
import { supergraphPath } from '../schema/subgraphs.ts';
import { GraphQLError } from 'graphql';
import { coerceSharedScalars } from './scalars.ts';
import { IncrementalGateway } from './query-plan-executor/gateway.ts';

/** What the gateway keeps per request and forwards to subgraphs. */
export interface GatewayContext {
  /** The caller the token gate (or the subscription engine) checked; null or absent when anonymous. */
  caller?: Caller | null;
  requestId: string;
  /** The caller's organisation (the token gate's), whose write epoch a mutation bumps (gateway/collapse/requests.ts). */
  orgId?: string;
  /** The caller's client (the token gate's, or a subscriber's): whose operation-name label slots an operation uses (metrics). */
  clientId?: string;
  /** How an operation run in-process came (metrics): a REST row's by default, or a subscription's event. */
  transport?: 'subscription';
}

/**
 * Sends the gateway's internal token for the caller (datasources.ts, internalAuthorization) and the
 * request id; the subgraph verifies the token. A subgraph
 * that cannot be reached becomes one SERVICE_UNAVAILABLE error naming it (REST answers 503), while
 * the other subgraphs' fields still resolve.
 */
class ForwardingDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  readonly serviceName: string;
  private readonly mint: InternalTokenMinter;

  constructor(serviceName: string, mint: InternalTokenMinter, config: Partial<RemoteGraphQLDataSource<GatewayContext>>) {
    super(config);
    this.serviceName = serviceName;
    this.mint = mint;
  }

  override async process(options: GraphQLDataSourceProcessOptions<GatewayContext>) {
    try {
      return await super.process(options);
    } catch (error) {
      // A subgraph refuses invalid input (a bad scalar literal or variable) with HTTP 400 and GraphQL
      // errors: pass those errors on, with their codes, instead of a bare "400: Bad Request".
      // (duck-typed: the gateway's CommonJS graphql is not this module's GraphQLError class)
      const response = (error as { extensions?: { response?: { status?: number; body?: { errors?: unknown } } } } | null)?.extensions?.response;
      if (response?.status === 400 && Array.isArray(response.body?.errors)) return { errors: response.body.errors };
      if (response) throw error;
      throw new GraphQLError(`The ${this.serviceName} service is unavailable; retry shortly`, {
        extensions: { code: 'SERVICE_UNAVAILABLE', serviceName: this.serviceName },
      });
    }
  }

  override async willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>) {
    const headers = request.http?.headers;
    if (!headers || !context) return;
    const authorization = await internalAuthorization(this.mint, context.caller, this.serviceName);
    if (authorization) headers.set('authorization', authorization);
    if (context.requestId) headers.set(REQUEST_ID_HEADER, context.requestId);
  }
}

/** How the gateway reaches its subgraphs (see gateway/datasources.ts and docs/benchmarks.md). */
export interface GatewayTransport {
  /** Signs the internal token each subgraph request carries (both transports). */
  mint: InternalTokenMinter;
  /** Subgraphs built in this process, executed without HTTP (SUBGRAPH_TRANSPORT=inprocess). */
  local?: readonly Subgraph[];
  /** Per-fetch timeout of the HTTP transport (SUBGRAPH_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Signs every HTTP fetch for the subgraph's internal hop check (INTERNAL_HOP_KEY). */
  hopKey?: string;
  /** GRAPHQL_MAX_RESPONSE_OBJECTS, counted over every part of an incremental (@defer) answer. */
  maxResponseObjects?: number;
}

/** The committed static supergraph's SDL. */
export const readSupergraphSdl = () => readFileSync(supergraphPath, 'utf8');

/**
 * The gateway on the committed static supergraph; `urls` overrides routing URLs by subgraph name. It plans and
 * executes @defer (gateway/query-plan-executor, a fork of Apollo Gateway's executor).
 */
export function createGateway(urls: Record<string, string>, transport: GatewayTransport, supergraphSdl = readSupergraphSdl()) {
  // One keep-alive pool shared by every HTTP subgraph; the query plan cache also keeps each fetch's
  // parsed document, which the in-process data source executes without parsing again.
  const pool = keepAliveFetcher({ timeoutMs: transport.timeoutMs });
  const fetcher = transport.hopKey ? signingFetcher(pool, transport.hopKey) : pool;
  const local = new Map((transport.local ?? []).map((subgraph) => [subgraph.name, subgraph]));
  const gateway = new IncrementalGateway({
    supergraphSdl,
    maxResponseObjects: transport.maxResponseObjects ?? Number.MAX_SAFE_INTEGER,
    queryPlannerConfig: { exposeDocumentNodeInFetchNode: local.size > 0 },
    experimental_approximateQueryPlanStoreMiB: 64,
    buildService: ({ name, url }) => {
      const subgraph = local.get(name);
      return subgraph
        ? new InProcessDataSource<GatewayContext>(subgraph, transport.mint)
        : new ForwardingDataSource(name, transport.mint, { url: urls[name] ?? url, fetcher });
    },
  });
  gateway.onSchemaLoadOrUpdate(({ apiSchema }) => coerceSharedScalars(apiSchema));
  return gateway;
}

export const subgraphReadyUrl = (graphqlUrl: string) => graphqlUrl.replace(/\/graphql\/?$/, '/readyz');

/** One readiness probe per subgraph: its database and data for an in-process one, its /readyz for one reached over HTTP. */
export function subgraphProbes(urls: Record<string, string>, local: readonly Subgraph[] = [], timeoutMs = 2000): Record<string, () => Promise<boolean>> {
  const probes: Record<string, () => Promise<boolean>> = Object.fromEntries(Object.entries(urls).map(([name, url]) =>
    [name, () => fetch(subgraphReadyUrl(url), { signal: AbortSignal.timeout(timeoutMs) }).then((r) => r.ok, () => false)]));
  for (const subgraph of local) probes[subgraph.name] = async () => !subgraph.pending() && await subgraph.db.orm.isConnected().catch(() => false);
  return probes;
}
