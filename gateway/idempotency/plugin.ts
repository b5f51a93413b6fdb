import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { ParseOptions } from 'graphql';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { statusForCode } from '../../subgraphs/platform/errors.ts';
import { canonicalTarget } from '../canonical-target.ts';
import { sendGraphqlErrors } from '../graphql-reply.ts';
import { problem, sendProblem } from '../rest/problem.ts';
import { graphqlMutation, IDEMPOTENCY_HEADER, parseIdempotencyKey, REPLAYED_HEADER, requestFingerprint, type DocumentByHash } from './request.ts';
import type { Claim, IdempotencyStore } from './store.ts';

export interface IdempotencyOptions {
  store: IdempotencyStore;
  /** The GraphQL endpoint: there only documents holding a mutation take part. */
  graphqlPath: string;
  parseOptions: ParseOptions;
  /** Documents sent by APQ hash alone are looked up here. */
  documentByHash: DocumentByHash;
  /** How often expired keys are deleted (0: never, e.g. in tests that call purgeExpired themselves). */
  purgeEveryMs: number;
  /** Counts each keyed request's outcome (metrics). */
  count?: (outcome: IdempotencyOutcome) => void;
}

export type IdempotencyOutcome = Claim['kind'] | 'invalid' | 'released';

/** Response headers kept with a stored response and given back on replay. */
const KEPT_HEADERS = ['content-type', 'location'];
const METHODS = new Set(['POST', 'PATCH']);
/** Refusals about who asks, not what was asked (token, scope, rate): the request never ran, so they are not kept. */
const NOT_KEPT = new Set([401, 403, 429]);
/** Answers larger than this are not kept (the key is released): bounded storage per key. */
export const MAX_STORED_BODY_BYTES = 1024 * 1024;

interface IdempotentRequest extends FastifyRequest {
  caller?: Caller | null;
  idempotencyRecord?: string;
}

/** APQ answers asking for the document's text: nothing ran, and Apollo Client retries with the text under the same key. */
const PERSISTED_QUERY_CODES = new Set(['PERSISTED_QUERY_NOT_FOUND', 'PERSISTED_QUERY_NOT_SUPPORTED']);

/** A GraphQL answer not to keep: a server-side failure (an error whose code maps to a 5xx, or no code at all), or a request for the document. */
function graphqlNotKept(payload: Buffer): boolean {
  try {
    const errors = (JSON.parse(payload.toString('utf8')) as { errors?: { extensions?: { code?: unknown } }[] }).errors;
    return !!errors?.some(({ extensions }) => PERSISTED_QUERY_CODES.has(extensions?.code as string) || statusForCode(extensions?.code) >= 500);
  } catch {
    return true;
  }
}

/**
 * Whether an answer is kept for replay. Not: a server error, a refusal of the caller, or a body
 * that cannot be kept (streamed, or over the bound); its key is released and a retry runs again.
 */
function keepable(status: number, body: Buffer | null, graphql: boolean): body is Buffer {
  if (!body || body.length > MAX_STORED_BODY_BYTES || status >= 500 || NOT_KEPT.has(status)) return false;
  return !(graphql && graphqlNotKept(body));
}

/**
 * `Idempotency-Key` (IETF HTTPAPI draft) on every POST and PATCH route of the scope it is
 * registered in (after the token gate, which names the caller), and on GraphQL mutations:
 * the first request with a key runs and its response is stored for the client and organisation;
 * a repeat gets that response again with `Idempotent-Replayed: true`, a repeat while it runs 409,
 * the key with another request 422. Server errors are not stored: the key is free again.
 */
export const idempotencyPlugin = fp(async (app: FastifyInstance, { store, graphqlPath, parseOptions, documentByHash, purgeEveryMs, count = () => undefined }: IdempotencyOptions) => {
  function refuse(request: FastifyRequest, reply: FastifyReply, status: number, code: string, detail: string) {
    if (request.routeOptions.url === graphqlPath) return sendGraphqlErrors(request, reply, status, [{ message: detail, extensions: { code, field: 'Idempotency-Key' } }]);
    return sendProblem(reply, problem(status, code, detail, { field: 'Idempotency-Key' }));
  }

  app.addHook('preHandler', async (request: IdempotentRequest, reply) => {
    const header = request.headers[IDEMPOTENCY_HEADER];
    // Without a caller the route answers 401 itself: an anonymous request learns nothing about keys.
    if (header === undefined || !METHODS.has(request.method) || !request.caller) return;
    // On GraphQL the operation is the request (however its document was sent); a query takes no part.
    const graphql = request.routeOptions.url === graphqlPath;
    const operation = graphql ? await graphqlMutation(request.body, documentByHash, parseOptions) : request.body;
    if (graphql && !operation) return;
    const key = parseIdempotencyKey(header);
    if (key === null) {
      count('invalid');
      return refuse(request, reply, 400, 'BAD_USER_INPUT', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters (a bare value or a quoted string)');
    }
    const claim = await store.claim({ clientId: request.caller.clientId, organisation: request.caller.orgId }, key, requestFingerprint(request.method, canonicalTarget(request.url), operation));
    count(claim.kind);
    switch (claim.kind) {
      case 'claimed':
        request.idempotencyRecord = claim.id;
        return;
      case 'replay':
        return reply.code(claim.response.status).headers({ ...claim.response.headers, [REPLAYED_HEADER]: 'true' }).send(claim.response.body);
      case 'in_progress':
        reply.header('retry-after', '1');
        return refuse(request, reply, 409, 'CONFLICT', 'A request with this Idempotency-Key is still being processed; retry later');
      case 'mismatch':
        return refuse(request, reply, 422, 'IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used for a different request (method, path or body); use a new key');
    }
  });

  app.addHook('onSend', async (request: IdempotentRequest, reply, payload) => {
    const id = request.idempotencyRecord;
    if (!id) return payload;
    request.idempotencyRecord = undefined;
    const body = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : payload == null ? Buffer.alloc(0) : null;
    try {
      if (!keepable(reply.statusCode, body, request.routeOptions.url === graphqlPath)) {
        count('released');
        await store.release(id);
      } else {
        const headers = Object.fromEntries(KEPT_HEADERS.flatMap((name) => {
          const value = reply.getHeader(name);
          return value === undefined ? [] : [[name, String(value)]];
        }));
        await store.complete(id, { status: reply.statusCode, headers, body });
      }
    } catch (error) {
      // The request itself succeeded or failed already; its answer goes out. The key stays
      // "in progress" and is taken over once abandoned.
      request.log.error({ err: { type: (error as Error).name, message: (error as Error).message } }, 'could not store the idempotent response');
    }
    return payload;
  });

  if (purgeEveryMs > 0) {
    let running: Promise<unknown> = Promise.resolve();
    const purge = () => {
      running = store.purgeExpired().catch((error: Error) => app.log.warn({ err: { type: error.name, message: error.message } }, 'could not delete expired idempotency keys'));
    };
    const timer = setInterval(purge, purgeEveryMs).unref();
    purge();
    // The database closes after the gateway: let a clean-up under way finish first.
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await running;
    });
  }
}, { name: 'idempotency' });
