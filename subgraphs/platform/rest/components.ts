import type { JsonSchema } from './types.ts';

/**
 * Shapes several operations share, published once under `#/components/schemas` of the OpenAPI
 * document: the REST tables register them as they load and refer to them with `$ref`.
 */
const registered: Record<string, JsonSchema> = {};

/** Registers `schema` under `name` and returns a reference to it; one name, one shape. */
export function component(name: string, schema: JsonSchema): JsonSchema {
  if (registered[name] && JSON.stringify(registered[name]) !== JSON.stringify(schema)) throw new Error(`Two different OpenAPI components named ${name}`);
  registered[name] = schema;
  return { $ref: `#/components/schemas/${name}` };
}

/** Every registered component, by name in alphabetical order (not the order the tables happened to load in, so that the document is the same whoever builds it). */
export const componentSchemas = (): Readonly<Record<string, JsonSchema>> =>
  Object.fromEntries(Object.entries(registered).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** `schema` or null (a `type` list gains 'null'; an enum gains null). */
export function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.$ref === 'string') return { oneOf: [schema, { type: 'null' }] };
  const type = [schema.type].flat().filter((t) => t !== undefined);
  return { ...schema, type: [...type, 'null'], ...(Array.isArray(schema.enum) ? { enum: [...schema.enum, null] } : {}) };
}

/** An answer object: every property is always present (null when unknown), as GraphQL selects them all. */
export const answer = (properties: Record<string, JsonSchema>, extra: JsonSchema = {}): JsonSchema =>
  ({ type: 'object', ...extra, properties, required: Object.keys(properties) });

export const str: JsonSchema = { type: 'string' };
export const int: JsonSchema = { type: 'integer' };
export const num: JsonSchema = { type: 'number' };
export const bool: JsonSchema = { type: 'boolean' };
export const dateTime: JsonSchema = { type: 'string', format: 'date-time' };
export const date: JsonSchema = { type: 'string', format: 'date' };
export const arrayOf = (items: JsonSchema, extra: JsonSchema = {}): JsonSchema => ({ type: 'array', items, ...extra });
