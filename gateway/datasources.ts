import http from 'node:http';
import https from 'node:https';
import { LocalGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { Fetcher, FetcherRequestInit, FetcherResponse } from '@apollo/utils.fetcher';
import type { GatewayGraphQLResponse } from '@apollo/server-gateway-interface';
import { createRequire } from 'node:module';
import type * as GraphQL from 'graphql';
import type { DocumentNode, GraphQLError, GraphQLFormattedError } from 'graphql';
import { formatError } from '../subgraphs/platform/format-error.ts';
import { nulError, requestContainsNul } from '../subgraphs/platform/nul-guard.ts';
import type { Subgraph } from '../subgraphs/platform/subgraph.ts';
import { turn } from '../subgraphs/platform/lanes.ts';
import type { Caller } from '../subgraphs/platform/auth/tokens.ts';
import type { InternalTokenMinter } from '../subgraphs/platform/auth/internal-token.ts';

// The CommonJS graphql that @apollo/subgraph built the schema with: a bundler resolving `import 'graphql'`
// to the ESM build (vitest does) would otherwise hand execute() a schema "from another realm".
const { execute, Kind, parse, validate, specifiedRules } = createRequire(import.meta.url)('graphql') as typeof GraphQL;

/** What the gateway keeps per request and hands to its data sources (see supergraph.ts). */
interface ForwardedContext {
  /** The caller the gateway checked (token gate or subscriber), null or absent when anonymous. */
  caller?: Caller | null;
  requestId: string;
}

/**
 * The Authorization value a subgraph receives, over HTTP and in-process alike: the gateway's internal
 * token for this caller and this subgraph, nothing for an anonymous caller. A client's own token never
 * goes further than the gateway.
 */
export async function internalAuthorization(mint: InternalTokenMinter, caller: Caller | null | undefined, subgraph: string) {
  return caller ? `Bearer ${await mint(caller, subgraph)}` : undefined;
}

/* ----------------------------------------------------------------------------------------------
 * Keep-alive HTTP fetcher
 * ------------------------------------------------------------------------------------------- */

export interface KeepAliveFetcherOptions {
  /** Sockets kept per subgraph origin (default 64). */
  maxSockets?: number;
  /** A subgraph that does not accept the connection, or then does not answer, within this time fails the fetch (default none). */
  timeoutMs?: number;
}

class BufferedResponse implements FetcherResponse {
  readonly url: string;
  readonly status: number;
  readonly statusText: string;
  readonly ok: boolean;
  readonly redirected = false;
  bodyUsed = false;
  private readonly rawHeaders: http.IncomingHttpHeaders;
  private readonly body: Buffer;
  private parsedHeaders: Headers | undefined;

  constructor(url: string, status: number, statusText: string, rawHeaders: http.IncomingHttpHeaders, body: Buffer) {
    this.url = url;
    this.status = status;
    this.statusText = statusText;
    this.ok = status >= 200 && status < 300;
    this.rawHeaders = rawHeaders;
    this.body = body;
  }

  get headers(): Headers {
    if (!this.parsedHeaders) {
      const headers = new Headers();
      for (const [name, value] of Object.entries(this.rawHeaders)) {
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
      }
      this.parsedHeaders = headers;
    }
    return this.parsedHeaders;
  }

  async text() { this.bodyUsed = true; return this.body.toString('utf8'); }
  async json() { this.bodyUsed = true; return JSON.parse(this.body.toString('utf8')) as unknown; }
  async arrayBuffer() {
    this.bodyUsed = true;
    return this.body.buffer.slice(this.body.byteOffset, this.body.byteOffset + this.body.byteLength) as ArrayBuffer;
  }
  clone(): FetcherResponse { return new BufferedResponse(this.url, this.status, this.statusText, this.rawHeaders, this.body); }
}

/**
 * A small fetcher on node:http with a keep-alive agent: connections to subgraphs are reused, and
 * none of make-fetch-happen's cache and retry machinery runs per request. Errors read like
 * node-fetch's ("request to <url> failed, reason: ..."), which the REST layer maps to 503.
 */
export function keepAliveFetcher(options: KeepAliveFetcherOptions = {}): Fetcher & { destroy(): void } {
  const agentOptions = { keepAlive: true, keepAliveMsecs: 1000, maxSockets: options.maxSockets ?? 64, scheduling: 'lifo' as const };
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new https.Agent(agentOptions);
  const fetcher = (url: string, init: FetcherRequestInit = {}) => new Promise<FetcherResponse>((resolve, reject) => {
    const target = new URL(url);
    const secure = target.protocol === 'https:';
    const fail = (error: Error) => reject(Object.assign(new Error(`request to ${url} failed, reason: ${error.message}`), { type: 'system', code: (error as NodeJS.ErrnoException).code }));
    const request = (secure ? https : http).request(target, {
      method: init.method ?? 'GET',
      headers: init.headers,
      agent: secure ? httpsAgent : httpAgent,
      signal: init.signal as AbortSignal | undefined,
    }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', fail);
      response.on('end', () => resolve(new BufferedResponse(url, response.statusCode ?? 0, response.statusMessage ?? '', response.headers, Buffer.concat(chunks))));
    });
    const { timeoutMs } = options;
    if (timeoutMs) {
      request.setTimeout(timeoutMs, () => request.destroy(new Error(`no answer within ${timeoutMs} ms (fetch timeout)`)));
      // setTimeout starts counting only once connected: a host that is off the network (no RST, no
      // ICMP) would hold a new connection for the kernel's SYN retries, over a minute.
      request.once('socket', (socket) => {
        if (!socket.connecting) return;
        const timer = setTimeout(() => request.destroy(new Error(`no connection within ${timeoutMs} ms (fetch timeout)`)), timeoutMs);
        socket.once('connect', () => clearTimeout(timer));
        request.once('close', () => clearTimeout(timer));
      });
    }
    request.on('error', fail);
    request.end(init.body);
  });
  return Object.assign(fetcher, { destroy() { httpAgent.destroy(); httpsAgent.destroy(); } });
}

/* ----------------------------------------------------------------------------------------------
 * In-process execution
 * ------------------------------------------------------------------------------------------- */

const DOCUMENT_CACHE_SIZE = 1000;

/** Apollo Server's rule for variable coercion errors (BAD_USER_INPUT), mirrored. */
function isVariableCoercionError(error: GraphQLError): boolean {
  const node = error.nodes?.length === 1 ? error.nodes[0] : undefined;
  return node?.kind === Kind.VARIABLE_DEFINITION && error.message.startsWith(`Variable "$${node.variable.name.value}"`);
}

/**
 * Executes a subgraph built in this process without HTTP: the gateway's fetch goes straight to the
 * subgraph's schema with a context built by the subgraph's own `context()` (the one its HTTP handler
 * uses) from the same internal token as over HTTP, so the subgraph verifies it, the scope guard runs and the EntityManager is
 * scoped to the caller's organisation exactly as over HTTP. Errors are formatted as the subgraph's
 * Apollo Server formats them (default code INTERNAL_SERVER_ERROR, BAD_USER_INPUT for variables,
 * then the platform's formatError), so callers cannot tell the two transports apart.
 *
 * Documents are parsed and validated once: the query planner hands over the fetch node's
 * DocumentNode (exposeDocumentNodeInFetchNode), and other strings are cached by text.
 */
export class InProcessDataSource<TContext extends ForwardedContext = ForwardedContext> extends LocalGraphQLDataSource<TContext> {
  readonly subgraph: Subgraph;
  private readonly mint: InternalTokenMinter;
  private readonly validated = new WeakMap<DocumentNode, readonly GraphQLError[]>();
  private readonly parsed = new Map<string, DocumentNode | readonly GraphQLError[]>();

  constructor(subgraph: Subgraph, mint: InternalTokenMinter) {
    super(subgraph.schema);
    this.subgraph = subgraph;
    this.mint = mint;
  }

  /** The parsed document, or the errors that make it unusable (syntax or validation). */
  private document(query: string, given?: DocumentNode): DocumentNode | readonly GraphQLError[] {
    let document = given;
    if (!document) {
      const cached = this.parsed.get(query);
      if (cached) return cached;
      try {
        document = parse(query);
      } catch (error) {
        return [error as GraphQLError];
      }
    }
    const errors = this.validationOf(document);
    const outcome = errors.length ? errors : document;
    if (!given) {
      if (this.parsed.size >= DOCUMENT_CACHE_SIZE) this.parsed.delete(this.parsed.keys().next().value as string);
      this.parsed.set(query, outcome);
    }
    return outcome;
  }

  /** Validates a fetch's document ahead of its first execution: the gateway does as it plans the query. */
  prepare(document: DocumentNode) {
    this.validationOf(document);
  }

  private validationOf(document: DocumentNode): readonly GraphQLError[] {
    let errors = this.validated.get(document);
    if (!errors) {
      errors = validate(this.schema, document, specifiedRules);
      this.validated.set(document, errors);
    }
    return errors;
  }

  private format(errors: readonly GraphQLError[], requestErrors: boolean, log: Subgraph['app']['log']): GraphQLFormattedError[] {
    return errors.map((error) => {
      const code = error.extensions?.code ?? (requestErrors && isVariableCoercionError(error) ? 'BAD_USER_INPUT' : 'INTERNAL_SERVER_ERROR');
      const formatted: GraphQLFormattedError = { ...error.toJSON(), extensions: { ...error.extensions, code } };
      try {
        return formatError(formatted, error, log);
      } catch {
        return { message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } };
      }
    });
  }

  override async process(options: GraphQLDataSourceProcessOptions<TContext>): Promise<GatewayGraphQLResponse> {
    const { request } = options;
    const forwarded = options.context as Partial<ForwardedContext> | undefined;
    const requestId = forwarded?.requestId ?? crypto.randomUUID();
    let child: Subgraph['app']['log'] | undefined;
    const log = () => child ??= this.subgraph.app.log.child({ reqId: requestId });
    if (!request.query) throw new Error('Missing query');
    const document = this.document(request.query, 'document' in options ? options.document : undefined);
    if (!('kind' in document)) {
      return { errors: document.map((error) => ({ ...error.toJSON(), extensions: { ...error.extensions, code: error.extensions?.code ?? 'GRAPHQL_VALIDATION_FAILED' } })) };
    }
    if (requestContainsNul(request.variables, document)) return { errors: [nulError().toJSON()] };
    const authorization = await internalAuthorization(this.mint, forwarded?.caller, this.subgraph.name);
    const contextValue = await this.subgraph.context(authorization, requestId, log);
    const result = await execute({
      schema: this.schema,
      document,
      variableValues: request.variables,
      operationName: request.operationName,
      contextValue,
    });
    // As a network hop would: the gateway's work on the answer (merging, shaping) runs on an event-loop
    // turn of its own, so a large answer is not executed and shaped in one hold of the loop, which
    // requests waiting meanwhile (another organisation's) would wait out.
    await turn();
    const response: GatewayGraphQLResponse = {};
    if ('data' in result) response.data = result.data as GatewayGraphQLResponse['data'];
    if (result.errors?.length) response.errors = this.format(result.errors, !('data' in result), log());
    if (result.extensions) response.extensions = result.extensions;
    return response;
  }
}
