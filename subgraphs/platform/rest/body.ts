import { badInput } from '../errors.ts';
import type { JsonSchema, RestRequest, RestRoute } from './types.ts';

/** The request body as a JSON object (an absent body counts as `{}`); anything else is a 400. */
export function objectBody(req: RestRequest): Record<string, unknown> {
  const { body } = req;
  if (body === undefined || body === null || body === '') return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw badInput('The request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** Picks the first key present (not undefined) among aliases, e.g. `userID` / `userId`. */
export function pick(body: Record<string, unknown>, ...names: string[]): unknown {
  for (const name of names) if (body[name] !== undefined) return body[name];
  return undefined;
}

/** Keeps only keys whose value is not undefined, so GraphQL sees "absent" rather than null. */
export const defined = <T extends Record<string, unknown>>(obj: T): Partial<T> =>
  Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;

/** A single string query parameter (the first when repeated); undefined when absent. */
export function queryString(req: RestRequest, name: string): string | undefined {
  const value = req.query[name];
  const first = Array.isArray(value) ? value[0] : value;
  if (first === undefined) return undefined;
  if (typeof first !== 'string') throw badInput(`query parameter ${name} must be a string`, name);
  return first;
}

/**
 * A request body schema closed to fields it does not name: the REST layer answers 400 for any other
 * top-level field (see unknownField), so typos fail loudly instead of being dropped. `aliases` are
 * other spellings the mapping accepts (`{ reqId: 'requestId' }`), documented as such.
 */
export function closedBody(schema: JsonSchema, aliases: Record<string, string> = {}): JsonSchema {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const aliasProperties = Object.fromEntries(Object.entries(aliases).map(([alias, of]) => {
    const { description: _own, ...target } = properties[of] ?? {};
    return [alias, { ...target, description: `Alias of ${of}` }];
  }));
  return { ...schema, properties: { ...properties, ...aliasProperties }, additionalProperties: false };
}

/** The first top-level field of an object body that the route's closed request schema does not name. */
export function unknownField(route: RestRoute, body: unknown): string | undefined {
  const schema = route.docs?.requestBody;
  if (!schema || schema.additionalProperties !== false || typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const known = (schema.properties ?? {}) as Record<string, unknown>;
  return Object.keys(body).find((name) => !Object.hasOwn(known, name));
}
