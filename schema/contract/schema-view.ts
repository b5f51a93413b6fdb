/**
 * A JSON Schema node as the breaking-change checker compares it: `$ref`s followed, `allOf` merged,
 * `oneOf`/`anyOf` joined (any branch's types and properties; only the properties every branch
 * requires). A keyword that is absent states no rule: `types` and `enum` are then undefined.
 */
export type Node = Record<string, unknown>;

export interface SchemaView {
  types?: Set<string>;
  enum?: unknown[];
  /** Whether the node names its properties at all (an object schema with no `properties` states no shape). */
  statesProperties: boolean;
  properties: Map<string, Node>;
  required: Set<string>;
  items?: Node;
  bounds: Map<string, unknown>;
}

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Follows local `$ref`s (`#/components/...`); an unknown or remote one is an empty schema. */
export function deref(doc: Node, node: unknown): Node {
  let current = node;
  for (let hops = 0; isNode(current) && typeof current.$ref === 'string' && hops < 32; hops++) {
    const ref = current.$ref;
    current = ref.startsWith('#/')
      ? ref.slice(2).split('/').map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~')).reduce<unknown>((at, key) => (isNode(at) ? at[key] : undefined), doc)
      : undefined;
  }
  return isNode(current) ? current : {};
}

/** Keywords that bound a value (the checker compares them on what partners send). */
export const upperBounds = ['maxLength', 'maxItems', 'maxProperties', 'maximum', 'exclusiveMaximum'];
export const lowerBounds = ['minLength', 'minItems', 'minProperties', 'minimum', 'exclusiveMinimum'];
const exactRules = ['pattern', 'format', 'additionalProperties', 'unevaluatedProperties'];

function own(node: Node): SchemaView {
  const type = node.type;
  const enumValues = 'const' in node ? [node.const] : Array.isArray(node.enum) ? node.enum : undefined;
  const properties = isNode(node.properties) ? node.properties : undefined;
  const bounds = new Map<string, unknown>();
  for (const key of [...upperBounds, ...lowerBounds, ...exactRules]) if (key in node && !isNode(node[key])) bounds.set(key, node[key]);
  return {
    types: typeof type === 'string' ? new Set([type]) : Array.isArray(type) ? new Set(type.map(String)) : undefined,
    enum: enumValues,
    statesProperties: !!properties,
    properties: new Map(Object.entries(properties ?? {}).filter((entry): entry is [string, Node] => isNode(entry[1]))),
    required: new Set(Array.isArray(node.required) ? node.required.map(String) : []),
    items: isNode(node.items) ? node.items : undefined,
    bounds,
  };
}

function intersectTypes(a?: Set<string>, b?: Set<string>) {
  if (!a || !b) return a ?? b;
  return new Set([...a].filter((t) => b.has(t) || (t === 'integer' && b.has('number'))));
}

function merge(views: SchemaView[], mode: 'all' | 'any'): SchemaView {
  const [first, ...rest] = views;
  return rest.reduce<SchemaView>((acc, view) => ({
    types: mode === 'all' ? intersectTypes(acc.types, view.types) : acc.types && view.types ? new Set([...acc.types, ...view.types]) : undefined,
    enum: mode === 'all' ? acc.enum ?? view.enum : acc.enum && view.enum ? [...acc.enum, ...view.enum] : undefined,
    statesProperties: acc.statesProperties || view.statesProperties,
    properties: new Map([...view.properties, ...acc.properties]),
    required: mode === 'all' ? new Set([...acc.required, ...view.required]) : new Set([...acc.required].filter((p) => view.required.has(p))),
    items: acc.items ?? view.items,
    bounds: mode === 'all' ? new Map([...view.bounds, ...acc.bounds]) : new Map([...acc.bounds].filter(([key]) => view.bounds.has(key))),
  }), first);
}

export function view(doc: Node, node: unknown, depth = 0): SchemaView {
  const schema = deref(doc, node);
  const parts = [own(schema)];
  if (depth < 16) {
    if (Array.isArray(schema.allOf)) parts.push(...schema.allOf.map((part) => view(doc, part, depth + 1)));
    for (const key of ['oneOf', 'anyOf']) {
      const branches = schema[key];
      if (Array.isArray(branches) && branches.length) parts.push(merge(branches.map((branch) => view(doc, branch, depth + 1)), 'any'));
    }
  }
  return merge(parts, 'all');
}
