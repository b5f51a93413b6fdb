import { notFound } from '../errors.ts';
import type { RestRequest, RestRoute } from './types.ts';

/**
 * A REST row's GraphQL operation as `npm run codegen` writes it from the area's `rest.graphql`: its text,
 * and, for the compiler only, the type of the `data` it answers.
 */
export interface RestOperation<Data> {
  readonly text: string;
  /** Never set: carries the result type to `typedRoute`. */
  readonly data?: Data;
}

type DataMappers = 'operation' | 'result' | 'headers' | 'cache';

/** A row whose mappings read its operation's generated result type. */
export interface TypedRow<Data extends Record<string, unknown>> extends Omit<RestRoute, DataMappers> {
  result(data: Data, req: RestRequest): unknown;
  headers?(data: Data, req: RestRequest): Record<string, string>;
  cache?: { maxAge: number; when(data: Data): boolean; key?: (variables: Record<string, unknown>) => unknown } | 'no-store';
}

/**
 * A row of the REST table running a generated operation: renaming a field it reads fails `npm run typecheck`.
 * The operation alone gives `Data`: a mapping shared by rows of several operations (a `cache.when` reading
 * a field they all select) must not narrow it.
 */
export const typedRoute = <Data extends Record<string, unknown>>(
  operation: RestOperation<Data>, row: NoInfer<TypedRow<Data>>,
): RestRoute => ({ ...row, operation: operation.text });

/** A lookup's result for a row's answer: the value, or NOT_FOUND (404) naming what and which. */
export function found<T>(value: T | null | undefined, what: string, id: string): T {
  if (value == null) throw notFound(what, id);
  return value;
}
