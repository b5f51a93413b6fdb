import { HeaderMap, type ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, type DocumentNode, type OperationDefinitionNode } from 'graphql';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { AppError } from '../../subgraphs/platform/errors.ts';
import { rootFieldNames } from '../../subgraphs/platform/root-fields.ts';
import { afterLastPart } from '../query-plan-executor/gateway.ts';
import { ServiceUnavailable } from './unavailable.ts';

export interface InFlightBoundOptions {
  /** Root query fields whose evaluations are bounded, e.g. `riskIndex`; each occurrence (alias) counts. */
  field: string;
  /** Named in the refusal, e.g. `Risk Index`. */
  label: string;
  max: number;
  retryAfterSeconds: number;
}

export interface InFlightBound {
  /** Takes the slots of the operations that ask for `field`, refusing those that find none free. */
  plugin: ApolloServerPlugin;
  /** True while no evaluation could start: a path known to ask for one may be refused before any other work. */
  full(): boolean;
  /** The refusal's text. */
  busy: string;
}

/**
 * A process-wide bound on costly evaluations (GraphQL and the REST rows, which run through the same
 * server): an operation asking for `field` takes one slot per occurrence when its operation is
 * resolved, before planning and execution, and frees them when its answer is sent (a deferred one's last part). With every slot
 * taken the answer is at once HTTP 503 SERVICE_UNAVAILABLE with Retry-After (REST: problem+json),
 * not a wait: the work a flood can queue on the event loop stays bounded, whatever its addresses.
 */
export function inFlightBound({ field, label, max, retryAfterSeconds }: InFlightBoundOptions): InFlightBound {
  let inFlight = 0;
  const busy = `The ${label} is busy (${max} evaluations running); retry in ${retryAfterSeconds} s`;
  const plugin: ApolloServerPlugin = {
    async requestDidStart() {
      let held = 0;
      const release = () => { inFlight -= held; held = 0; };
      return {
        async didResolveOperation({ operation, document }: { operation?: OperationDefinitionNode | null; document: DocumentNode }) {
          if (!operation || operation.operation !== 'query') return;
          const wanted = rootFieldNames(operation, document).filter((name) => name === field).length;
          if (wanted === 0) return;
          // Never admitted, however long the caller waits: the caller's error, not a 503.
          if (wanted > max) throw new AppError('BAD_USER_INPUT', `an operation may ask for at most ${max} ${field} at once; got ${wanted}`, { field, http: { status: 400 } });
          if (inFlight + wanted > max) {
            throw new GraphQLError(busy, {
              extensions: { code: 'SERVICE_UNAVAILABLE', retryAfter: retryAfterSeconds, http: { status: 503, headers: new HeaderMap([['retry-after', String(retryAfterSeconds)]]) } },
            });
          }
          inFlight += wanted;
          held = wanted;
        },
        // A deferred operation holds its slots until its last deferred fetch has settled.
        async willSendResponse({ contextValue }) { afterLastPart(contextValue, release); },
      };
    },
  };
  return { plugin, full: () => inFlight >= max, busy };
}

/** A bound and the REST paths known to ask for one evaluation of its field. */
export interface RestInFlightBound extends Pick<InFlightBoundOptions, 'retryAfterSeconds'> {
  restPrefix: string;
  /** Paths under the prefix that ask for no evaluation. */
  restExempt?: readonly string[];
  bound: InFlightBound;
}

/**
 * A REST path of a bounded field asks for one evaluation: with none free it is refused before the token
 * gate, the rate limit and the GraphQL pipeline, the cheapest answer a flood can get. A
 * revalidation (If-None-Match) may be a 304 that needs none: the bound's plugin refuses it otherwise.
 */
async function restInFlight(app: FastifyInstance, { bounds }: { bounds: readonly RestInFlightBound[] }) {
  app.addHook('onRequest', async (request) => {
    if (request.headers['if-none-match'] !== undefined) return;
    const url = request.routeOptions.url;
    const asks = ({ restPrefix, restExempt = [] }: RestInFlightBound) =>
      url?.startsWith(`${restPrefix}/`) && !restExempt.some((path) => url === path || url.startsWith(`${path}/`));
    const full = bounds.find((b) => asks(b) && b.bound.full());
    if (full) throw new ServiceUnavailable(full.bound.busy, full.retryAfterSeconds);
  });
}

/** Register on the root instance: `await app.register(restInFlightPlugin, { bounds })`. */
export const restInFlightPlugin = fp(restInFlight, { name: 'rest-in-flight' });
