import type { BreakingChange } from './change.ts';
import { deref, lowerBounds, upperBounds, view, type Node, type SchemaView } from './schema-view.ts';

/**
 * Compares a schema of the baseline with the current one. On the request side (what partners send)
 * a rule the baseline stated must not get stricter; on the response side (what partners read) what
 * the baseline promised must still hold. Stating a rule where the baseline stated none (a type, an
 * enum, a pattern, a bound, the properties of a shapeless object, closing a shapeless object) only
 * documents what the server did: not breaking. Closing an object whose properties the baseline listed
 * is breaking: a request with another property was accepted.
 */
export interface SchemaDiff { base: Node; current: Node; out: BreakingChange[] }

const accepts = (types: Set<string>, type: string) => types.has(type) || (type === 'integer' && types.has('number'));
/** The enum values of the baseline that the current enum lacks (none when either states no enum). */
const removedValues = (b: SchemaView, c: SchemaView) => (b.enum && c.enum ? b.enum.filter((v) => !c.enum?.some((w) => JSON.stringify(w) === JSON.stringify(v))) : []);
const closed = (v: SchemaView) => v.bounds.get('additionalProperties') === false || v.bounds.get('unevaluatedProperties') === false;

function request(b: SchemaView, c: SchemaView, location: string, add: (kind: string, where: string, message: string) => void) {
  const narrowed = b.types && c.types ? [...b.types].filter((t) => !accepts(c.types ?? new Set(), t)) : [];
  if (narrowed.length) add('request-type-narrowed', location, `no longer accepts ${narrowed.join(', ')}`);
  for (const value of removedValues(b, c)) {
    add('request-enum-value-removed', `${location} ${JSON.stringify(value)}`, 'an accepted value is refused');
  }
  for (const key of upperBounds) {
    const [was, is] = [b.bounds.get(key), c.bounds.get(key)];
    if (typeof was === 'number' && typeof is === 'number' && is < was) add('request-bound-narrowed', `${location} ${key}`, `${key} ${was} → ${is}`);
  }
  for (const key of lowerBounds) {
    const [was, is] = [b.bounds.get(key), c.bounds.get(key)];
    if (typeof was === 'number' && typeof is === 'number' && is > was) add('request-bound-narrowed', `${location} ${key}`, `${key} ${was} → ${is}`);
  }
  for (const key of ['pattern', 'format']) {
    const [was, is] = [b.bounds.get(key), c.bounds.get(key)];
    if (was !== undefined && is !== undefined && was !== is) add('request-rule-changed', `${location} ${key}`, `${key} ${String(was)} → ${String(is)}`);
  }
  // An object whose properties the baseline listed took other properties too, unless it said otherwise.
  const wasOpen = (key: string) => b.bounds.get(key) === true || (b.bounds.get(key) === undefined && b.statesProperties && !closed(b));
  for (const key of ['additionalProperties', 'unevaluatedProperties']) {
    if (c.bounds.get(key) === false && wasOpen(key)) add('request-rule-changed', `${location} ${key}`, 'unknown properties are refused');
  }
  if (!b.statesProperties) return;
  for (const name of c.required) if (!b.required.has(name)) add('request-property-became-required', `${location}.${name}`, 'a request without it is refused');
  if (closed(c)) for (const name of b.properties.keys()) if (!c.properties.has(name)) add('request-property-removed', `${location}.${name}`, 'a request with it is refused');
}

function response(b: SchemaView, c: SchemaView, location: string, add: (kind: string, where: string, message: string) => void) {
  const widened = b.types ? c.types ? [...c.types].filter((t) => !accepts(b.types ?? new Set(), t)) : ['any type'] : [];
  if (widened.length) add('response-type-widened', location, `may now be ${widened.join(', ')}`);
  if (b.enum && !c.enum) add('response-enum-removed', location, 'any value may now be answered');
  for (const value of removedValues(b, c)) {
    add('response-enum-value-removed', `${location} ${JSON.stringify(value)}`, 'a documented value is no longer answered');
  }
  for (const name of b.properties.keys()) if (!c.properties.has(name)) add('response-property-removed', `${location}.${name}`, 'no longer answered');
  for (const name of b.required) {
    if (c.properties.has(name) && !c.required.has(name)) add('response-property-became-optional', `${location}.${name}`, 'may now be missing');
  }
}

/** `within`: the pairs of schemas being compared further up, so that a recursive schema ends. */
export function compareSchemas(diff: SchemaDiff, side: 'request' | 'response', baseNode: unknown, currentNode: unknown, location: string, within: [Node, Node][] = []) {
  const [baseSchema, currentSchema] = [deref(diff.base, baseNode), deref(diff.current, currentNode)];
  if (within.some(([b, c]) => b === baseSchema && c === currentSchema)) return;
  const inner: [Node, Node][] = [...within, [baseSchema, currentSchema]];
  const [b, c] = [view(diff.base, baseSchema), view(diff.current, currentSchema)];
  const add = (kind: string, where: string, message: string) => diff.out.push({ kind, location: where, message });
  (side === 'request' ? request : response)(b, c, location, add);
  for (const [name, schema] of b.properties) {
    const next = c.properties.get(name);
    if (next) compareSchemas(diff, side, schema, next, `${location}.${name}`, inner);
  }
  if (b.items && c.items) compareSchemas(diff, side, b.items, c.items, `${location}[]`, inner);
}
