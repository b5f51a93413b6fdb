import { createRequire } from 'node:module';
import type * as GraphQL from 'graphql';
import type { GraphQLFieldResolver, GraphQLSchema } from 'graphql';
import { inBackgroundLane, turn } from './lanes.ts';

// The CommonJS graphql that @apollo/subgraph builds the schema with (see gateway/datasources.ts).
const { defaultFieldResolver, getNullableType, isIntrospectionType, isListType, isObjectType } =
  createRequire(import.meta.url)('graphql') as typeof GraphQL;

/** A resolved list this long or longer is handed back after an event-loop turn of its own. */
export const LIST_TURN_MIN = 50;

/** The turn the last big list of each lane waits for, process-wide: each one queues behind the one before. */
const turns = { foreground: Promise.resolve(), background: Promise.resolve() };

function afterTurn(value: unknown) {
  if (!Array.isArray(value) || value.length < LIST_TURN_MIN) return value;
  const lane = inBackgroundLane() ? 'background' : 'foreground';
  turns[lane] = turns[lane].then(turn);
  return turns[lane].then(() => value);
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as PromiseLike<unknown> | null)?.then === 'function';

/**
 * Wraps every list-typed field's resolver (the default one included) so that a big list is completed
 * on a turn of its own. graphql-js completes a resolved list and everything under it in one
 * synchronous piece: a document of 29 pages of 100 bookings, executed in-process on the gateway's
 * event loop, held it for tens of ms and delayed every other organisation's requests meanwhile.
 * Smaller lists stay synchronous: no added latency for ordinary requests.
 * In the background lane (a subscription's execution) the turn waits for the requests in flight (lanes.ts).
 */
export function listTurns(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    // Introspection types are shared by every schema of the process: never wrapped.
    if (!isObjectType(type) || isIntrospectionType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (!isListType(getNullableType(field.type))) continue;
      const resolve: GraphQLFieldResolver<unknown, unknown> = field.resolve ?? defaultFieldResolver;
      field.resolve = (...args) => {
        const value = resolve(...args);
        return isThenable(value) ? value.then(afterTurn) : afterTurn(value);
      };
    }
  }
  return schema;
}
