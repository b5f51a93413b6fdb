import type { ApolloServerPlugin } from '@apollo/server';
import type { FastifyRequest } from 'fastify';
import type { ParseOptions } from 'graphql';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { IDEMPOTENCY_HEADER, type DocumentByHash } from '../idempotency/request.ts';
import { callerIdentity, collapseKey, Collapser, OperationTypes, WriteEpochs } from './collapser.ts';

export type CollapseKind = 'graphql' | 'rest';

export interface RequestCollapsingOptions {
  parseOptions: ParseOptions;
  /** Documents sent by APQ hash alone are looked up here; one not registered yet is not collapsed. */
  documentByHash: DocumentByHash;
  /** Counts each request that got a leader's answer instead of running (metrics). */
  count: (kind: CollapseKind) => void;
}

type CallerRequest = FastifyRequest & { caller?: Caller | null };

/** What an operation's answer can depend on beyond its document and variables: who asks, and which of the organisation's writes it follows. */
function identity(request: CallerRequest, epochs: WriteEpochs) {
  const caller = request.caller ?? null;
  return { caller: callerIdentity(caller), epoch: epochs.of(caller?.orgId) };
}

/** The GraphQL request of POST (the JSON body) or GET (the URL's parameters, JSON-encoded variables and extensions). */
function graphqlParams(request: FastifyRequest) {
  if (request.method === 'POST') {
    const body = request.body;
    return typeof body === 'object' && body !== null && !Array.isArray(body) ? body as Record<string, unknown> : null;
  }
  const query = (request.query ?? {}) as Record<string, unknown>;
  const json = (value: unknown) => {
    if (typeof value !== 'string') return value;
    try { return JSON.parse(value) as unknown; } catch { return value; }
  };
  return { ...query, variables: json(query.variables), extensions: json(query.extensions) };
}

/**
 * Collapsing of identical in-flight reads (REQUEST_COLLAPSING, see docs/graphql.md "Identical requests in flight"): a
 * POST or GET /graphql query, or a REST row's query, asked again while the first one runs gets that
 * first one's answer. The key is the document, operation name, variables and the caller's identity
 * (client, organisation, scopes) and write epoch; for /graphql also the method and the headers that
 * change the answer's bytes (`accept`, `content-type`). Never collapsed: a mutation or subscription,
 * a request with an `Idempotency-Key`, a document whose operation is not known (does not parse, or
 * an APQ hash not registered).
 */
export function requestCollapsing({ parseOptions, documentByHash, count }: RequestCollapsingOptions) {
  const collapser = new Collapser();
  const epochs = new WriteEpochs();
  const types = new OperationTypes(parseOptions);
  const isQuery = (text: string, operationName: string | undefined) => types.of(text, operationName) === 'query';

  /** Bumps the caller organisation's write epoch as each mutation (GraphQL or a REST write) is answered. */
  const plugin: ApolloServerPlugin<{ orgId?: string }> = {
    async requestDidStart() {
      return {
        async willSendResponse({ operation, contextValue }) {
          if (operation?.operation === 'mutation' && contextValue.orgId !== undefined) epochs.bump(contextValue.orgId);
        },
      };
    },
  };

  return {
    plugin,
    collapser,
    /** The key of a /graphql request that may be collapsed, or null. */
    async graphqlKey(request: CallerRequest): Promise<string | null> {
      if (request.headers[IDEMPOTENCY_HEADER] !== undefined || (request.method !== 'POST' && request.method !== 'GET')) return null;
      const params = graphqlParams(request);
      if (!params) return null;
      const { query, operationName, variables, extensions } = params;
      const hash = (extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined)?.persistedQuery?.sha256Hash;
      const text = typeof query === 'string' ? query : typeof hash === 'string' ? await documentByHash(hash) : undefined;
      if (text === undefined || (operationName != null && typeof operationName !== 'string')) return null;
      if (!isQuery(text, operationName ?? undefined)) return null;
      const { accept, 'content-type': contentType } = request.headers;
      return collapseKey({ kind: 'graphql', method: request.method, text, operationName, variables, extensions, accept, contentType, ...identity(request, epochs) });
    },
    /** The key of a REST row's operation that may be collapsed, or null. */
    restKey(query: string, variables: Record<string, unknown>, request: CallerRequest): string | null {
      if (request.headers[IDEMPOTENCY_HEADER] !== undefined || !isQuery(query, undefined)) return null;
      return collapseKey({ kind: 'rest', query, variables, ...identity(request, epochs) });
    },
    /** Runs `work`, or joins the identical one in flight (`key` null: runs it alone). */
    async run<T>(kind: CollapseKind, key: string | null, work: () => Promise<T>): Promise<{ answer: T; shared: boolean }> {
      if (key === null) return { answer: await work(), shared: false };
      const { answer, shared } = collapser.run(key, work);
      if (shared) count(kind);
      return { answer: await answer, shared };
    },
  };
}

export type RequestCollapsing = ReturnType<typeof requestCollapsing>;
