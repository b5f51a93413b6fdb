import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { AppError, statusForCode } from '../../subgraphs/platform/errors.ts';
import { sendGraphqlErrors } from '../http/graphql-reply.ts';
import { DocumentRefused, type DocumentRequest, type TrustedDocuments } from './registry.ts';

type Params = Record<string, unknown>;

/** The query string Apollo Server reads for a GET whose document this hook replaced (graphql-handler.ts). */
const rewritten = new WeakMap<FastifyRequest, string>();
export const rewrittenSearch = (request: FastifyRequest) => rewritten.get(request);

const jsonParam = (value: unknown) => {
  if (typeof value !== 'string') return value;
  try { return JSON.parse(value) as unknown; } catch { return value; }
};
const stringOr = (value: unknown) => (typeof value === 'string' ? value : undefined);
type ApqExtensions = { persistedQuery?: { sha256Hash?: unknown } } | null | undefined;
const apqHash = (extensions: unknown) => stringOr((extensions as ApqExtensions)?.persistedQuery?.sha256Hash);

/** What a GraphQL request (a POST body, a GET's parameters, a subscription's payload) names. */
export function documentRequest(params: Params): DocumentRequest {
  const documentId = stringOr(params.documentId);
  const hash = apqHash(jsonParam(params.extensions));
  return {
    query: stringOr(params.query), id: documentId ?? hash, idKind: documentId !== undefined ? 'documentId' : 'apq',
    operationName: stringOr(params.operationName),
  };
}

/**
 * The parameters with `text` as the document and no id left: neither `documentId` nor the APQ
 * extension, whose hash Apollo Server would check against the text.
 */
export function withDocument(params: Params, text: string): Params {
  const { documentId: _id, extensions, ...rest } = params;
  const parsed = jsonParam(extensions);
  const { persistedQuery: _apq, ...others } = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Params;
  if (!Object.keys(others).length) return { ...rest, query: text };
  return { ...rest, query: text, extensions: typeof extensions === 'string' ? JSON.stringify(others) : others };
}

export const refusalError = (error: DocumentRefused) => ({ message: error.message, extensions: error.extensions });

/**
 * POST and GET /graphql: a request naming a registered document by id runs that document's text
 * (on GET too); the owner's mode decides what happens to a text that is none of its documents.
 * A preHandler ahead of the Idempotency-Key plugin and request collapsing, so that both see the text.
 */
export function trustedDocumentsHook(api: FastifyInstance, trusted: TrustedDocuments, graphqlPath: string) {
  api.addHook('preHandler', async (request: FastifyRequest & { caller?: Caller | null }, reply: FastifyReply) => {
    if (request.routeOptions.url !== graphqlPath || request.ws || (request.method !== 'POST' && request.method !== 'GET')) return;
    const post = request.method === 'POST';
    const params = (post ? request.body : request.query) as Params | null;
    if (typeof params !== 'object' || params === null || Array.isArray(params)) return;
    try {
      const text = await trusted.resolve(request.caller, documentRequest(params));
      if (text === undefined) return;
      const replaced = withDocument(params, text);
      if (post) {
        request.body = replaced;
      } else {
        request.query = replaced;
        rewritten.set(request, `?${new URLSearchParams(replaced as Record<string, string>)}`);
      }
    } catch (error) {
      if (error instanceof AppError) {
        return sendGraphqlErrors(request, reply, statusForCode(error.code), [{ message: error.message, extensions: { code: error.code } }]);
      }
      if (!(error instanceof DocumentRefused)) throw error;
      if (error.code === 'PERSISTED_QUERY_NOT_FOUND') reply.header('cache-control', 'private, no-cache, must-revalidate');
      return sendGraphqlErrors(request, reply, error.status, [refusalError(error)]);
    }
  });
}
