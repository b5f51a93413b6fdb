import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callerKey } from '../../subgraphs/platform/auth/caller-key.ts';
import fp from 'fastify-plugin';
import type { ParseOptions } from 'graphql';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { canonicalTarget } from '../http/canonical-target.ts';
import { sendGraphqlErrors } from '../http/graphql-reply.ts';
import { problem, sendProblem } from '../../subgraphs/platform/rest/problem.ts';
import { answerHeaders, holdsSecret, keepable } from './answer.ts';
import { graphqlMutation, IDEMPOTENCY_HEADER, parseIdempotencyKey, REPLAYED_HEADER, requestFingerprint, type DocumentByHash } from './request.ts';
import { selectsSecret } from './secrets.ts';
import type { Claim, IdempotencyStore, StoredResponse } from './store.ts';

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

const METHODS = new Set(['POST', 'PATCH']);

interface IdempotentRequest extends FastifyRequest {
  caller?: Caller | null;
  idempotency?: { id: string; graphql: boolean; carriesSecret: boolean };
}

const SECRET_NOT_REPLAYED = 'IDEMPOTENT_SECRET_NOT_REPLAYED';

/**
 * `Idempotency-Key` (IETF HTTPAPI draft) on every POST and PATCH route of the scope it is
 * registered in (after the token gate, which names the caller), and on GraphQL mutations:
 * the first request with a key runs and its response is stored for the client and organisation;
 * a repeat gets that response again with `Idempotent-Replayed: true` when its token holds every scope
 * of the first one's (else 403, as the route would answer a token without them: the replay runs
 * before the route's own scope check), a repeat while it runs 409, the key with another request 422.
 * Server errors and refusals of the caller are not stored: the key is free again. An answer that
 * carries a secret is never stored: its request is marked as run, and a repeat answers 409.
 */
export const idempotencyPlugin = fp(async (app: FastifyInstance, options: IdempotencyOptions) => {
  const { store, graphqlPath, parseOptions, documentByHash, purgeEveryMs, count = () => undefined } = options;
  function refuse(request: FastifyRequest, reply: FastifyReply, status: number, code: string, detail: string) {
    if (request.routeOptions.url === graphqlPath) return sendGraphqlErrors(request, reply, status, [{ message: detail, extensions: { code, field: 'Idempotency-Key' } }]);
    return sendProblem(reply, problem(status, code, detail, { field: 'Idempotency-Key' }));
  }
  function replay(reply: FastifyReply, { status, headers, body }: StoredResponse) {
    // The replaying request's own headers (security, rate-limit counters) stand; the answer's are added.
    for (const [name, value] of Object.entries(headers)) if (!reply.hasHeader(name)) reply.header(name, value);
    return reply.code(status).header(REPLAYED_HEADER, 'true').send(body);
  }

  app.addHook('preHandler', async (request: IdempotentRequest, reply) => {
    const header = request.headers[IDEMPOTENCY_HEADER];
    // Without a caller the route answers 401 itself: an anonymous request learns nothing about keys.
    if (header === undefined || !METHODS.has(request.method) || !request.caller) return;
    // On GraphQL the operation is the request (however its document was sent); a query takes no part.
    const graphql = request.routeOptions.url === graphqlPath;
    const mutation = graphql ? await graphqlMutation(request.body, documentByHash, parseOptions) : null;
    if (graphql && !mutation) return;
    const key = parseIdempotencyKey(header);
    if (key === null) {
      count('invalid');
      return refuse(request, reply, 400, 'BAD_USER_INPUT', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters (a bare value or a quoted string)');
    }
    const carriesSecret = mutation ? selectsSecret(mutation.document) : !!request.routeOptions.config.carriesSecret;
    const fingerprint = requestFingerprint(request.method, canonicalTarget(request.url), mutation ? mutation.operation : request.body);
    const { caller } = request;
    const owner = { clientId: callerKey(caller), organisation: caller.orgId };
    const claim = await store.claim(owner, { key, fingerprint, scopes: caller.scopes });
    // An answer kept before secrets were withheld (or by a version that did not mark this request) is not shown either.
    const withheld = claim.kind === 'withheld'
      || (claim.kind === 'replay' && carriesSecret && holdsSecret(claim.response.status, claim.response.body, graphql));
    count(withheld ? 'withheld' : claim.kind);
    if (withheld) {
      return refuse(request, reply, 409, SECRET_NOT_REPLAYED, 'This Idempotency-Key\'s request ran, and its answer carried a '
        + 'secret, which is shown once and never kept: it is not shown again, and the request is not run again (that would '
        + 'void the secret). Use a new key to run it again');
    }
    switch (claim.kind) {
      case 'claimed':
        request.idempotency = { id: claim.id, graphql, carriesSecret };
        return;
      case 'replay':
        return replay(reply, claim.response);
      case 'forbidden': {
        const missing = claim.missing.map((scope) => `'${scope}'`).join(', ');
        return refuse(request, reply, 403, 'FORBIDDEN', `The access token lacks the ${missing} scope of the token that made `
          + 'this Idempotency-Key\'s request, whose answer it would replay');
      }
      case 'in_progress':
        reply.header('retry-after', '1');
        return refuse(request, reply, 409, 'CONFLICT', 'A request with this Idempotency-Key is still being processed; retry later');
      case 'mismatch':
        return refuse(request, reply, 422, 'IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used for a different request (method, path or body); use a new key');
    }
  });

  app.addHook('onSend', async (request: IdempotentRequest, reply, payload) => {
    const claimed = request.idempotency;
    if (!claimed) return payload;
    request.idempotency = undefined;
    const { id, graphql, carriesSecret } = claimed;
    const body = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : payload == null ? Buffer.alloc(0) : null;
    try {
      // Before keepable: a mutation that ran beside a failed one must not run again either.
      if (carriesSecret && body && holdsSecret(reply.statusCode, body, graphql)) {
        await store.withhold(id);
      } else if (!keepable(reply.statusCode, body, graphql)) {
        count('released');
        await store.release(id);
      } else {
        await store.complete(id, { status: reply.statusCode, headers: answerHeaders(reply.getHeaders()), body });
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
