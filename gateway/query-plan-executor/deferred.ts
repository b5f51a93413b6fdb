/**
 * The deferred fragments of an incremental answer (the format of the 2022-08-24 defer proposal, which Apollo
 * Client 4's Defer20220824Handler and Apollo Router speak): the primary part shaped first, then one payload
 * `{ incremental: [{ data, path, label?, errors? }], hasNext }` per deferred fragment as soon as its fetches
 * are done, in the order they finish (a nested fragment never before the one holding it).
 *
 * Each part is shaped on its own, with its own selection set at each object of its path that the parts sent
 * so far hold (one item per object: a fragment inside a list gives one per element): null propagation stops at
 * the fragment (its item's `data` is null) and its fetches' errors stay in its items (value completion errors,
 * when fetching had none, in the item's `extensions.valueCompletion`, as upstream does for a whole answer).
 * The objects of all parts are counted against GRAPHQL_MAX_RESPONSE_OBJECTS: past it the answer ends with one
 * RESPONSE_TOO_LARGE error and `hasNext: false`.
 */
import {
  baseType, isCompositeType, isSubtype, parseSelectionSet, typenameFieldName,
  type CompositeType, type FieldSelection, type Operation, type SelectionSet,
} from '@apollo/federation-internals';
import type { GraphQLError, GraphQLFormattedError } from 'graphql';
import { countObjects } from '../../subgraphs/platform/cost/response-size.ts';
import { tooLarge } from '../../subgraphs/platform/cost/plugin.ts';
import type { PartState } from './execute.ts';
import { shapeSelectionSet } from './shaping.ts';

type Data = Record<string, unknown>;
type Path = (string | number)[];

/** A deferred fragment being fetched: its part, and when its fetches are done. */
export interface DeferredPart {
  part: PartState;
  executed: Promise<PartState>;
}

export interface IncrementalItem {
  data: Data | null;
  path: Path;
  label?: string;
  errors?: GraphQLFormattedError[];
  extensions?: { valueCompletion: GraphQLFormattedError[] };
}

export interface SubsequentPayload {
  incremental?: IncrementalItem[];
  errors?: GraphQLFormattedError[];
  hasNext: boolean;
}

/** A deferred part's error as Apollo Server formats the primary's: a code always, no HTTP details. */
export function formatError(error: GraphQLError): GraphQLFormattedError {
  const { http: _http, ...extensions } = error.toJSON().extensions ?? {};
  return { ...error.toJSON(), extensions: { ...extensions, code: extensions.code ?? 'INTERNAL_SERVER_ERROR' } };
}

/** The static type at a deferred fragment's path (response names and `... on T`), through the operation's selections. */
function typeAtPath(operation: Operation, queryPath: readonly string[]): CompositeType {
  const schema = operation.schema();
  let type = schema.schemaDefinition.rootType(operation.rootKind)! as CompositeType;
  let selections: SelectionSet | undefined = operation.expandAllFragments().selectionSet;
  const find = (set: SelectionSet, name: string): FieldSelection | undefined => {
    for (const selection of set.selections()) {
      if (selection.kind === 'FieldSelection') {
        if (selection.element.responseName() === name) return selection;
      } else {
        const found = find(selection.selectionSet, name);
        if (found) return found;
      }
    }
    return undefined;
  };
  for (const element of queryPath) {
    if (element.startsWith('... on ')) {
      type = schema.type(element.slice('... on '.length)) as CompositeType;
      continue;
    }
    const field: FieldSelection | undefined = selections && find(selections, element);
    const named = field?.element.definition.type && baseType(field.element.definition.type);
    if (!field || !named || !isCompositeType(named)) throw new Error(`No composite field "${element}" on the path ${queryPath.join('/')}`);
    type = named;
    selections = field.selectionSet;
  }
  return type;
}

/** The objects at `queryPath` that the answer sent so far holds (non-null), each with its fetched data and concrete path. */
function targets(operation: Operation, sent: unknown, fetched: unknown, queryPath: readonly string[]) {
  const found: { path: Path; input: Data; into: Data }[] = [];
  const walk = (sentValue: unknown, fetchedValue: unknown, index: number, path: Path) => {
    if (sentValue === null || typeof sentValue !== 'object' || fetchedValue === null || typeof fetchedValue !== 'object') return;
    if (Array.isArray(sentValue)) {
      sentValue.forEach((item, i) => walk(item, (fetchedValue as unknown[])[i], index, [...path, i]));
      return;
    }
    const element = queryPath[index];
    if (element === undefined) {
      found.push({ path, input: fetchedValue as Data, into: sentValue as Data });
    } else if (element.startsWith('... on ')) {
      const typename = (fetchedValue as Data)[typenameFieldName];
      const condition = operation.schema().type(element.slice('... on '.length));
      const runtime = typeof typename === 'string' ? operation.schema().type(typename) : undefined;
      if (!runtime || (condition && isCompositeType(condition) && isSubtype(condition, runtime))) walk(sentValue, fetchedValue, index + 1, path);
    } else {
      walk((sentValue as Data)[element], (fetchedValue as Data)[element], index + 1, [...path, element]);
    }
  };
  walk(sent, fetched, 0, []);
  return found;
}

/** Copies `source`'s fields into `target`, merging objects and same-length lists (what a client does with a part). */
function mergeInto(target: Data, source: Data) {
  for (const [key, value] of Object.entries(source)) {
    const existing = target[key];
    if (value !== null && typeof value === 'object' && existing !== null && typeof existing === 'object') {
      if (Array.isArray(value) && Array.isArray(existing)) value.forEach((item, i) => {
        if (item !== null && typeof item === 'object' && existing[i] !== null && typeof existing[i] === 'object') mergeInto(existing[i] as Data, item as Data);
        else existing[i] = item;
      });
      else if (!Array.isArray(value) && !Array.isArray(existing)) mergeInto(existing as Data, value as Data);
      else target[key] = value;
    } else {
      target[key] = value;
    }
  }
}

/** A queue of parts whose fetches are done, in the order they finish. */
class ReadyParts {
  private readonly ready: PartState[] = [];
  private wake?: () => void;
  push(part: PartState) { this.ready.push(part); this.wake?.(); }
  async next(): Promise<PartState> {
    while (!this.ready.length) await new Promise<void>((resolve) => { this.wake = resolve; });
    return this.ready.shift()!;
  }
}

/** A subsequent payload's JSON text, and whether it is the last (`hasNext: false`). */
export interface PayloadText { json: string; last: boolean }

/** Payload texts kept for every reader: the request's, and those of identical requests collapsed onto it. */
class PayloadLog {
  private readonly entries: PayloadText[] = [];
  private ended = false;
  private readonly waiting = new Set<() => void>();
  append(payload: SubsequentPayload) { this.entries.push({ json: JSON.stringify(payload), last: !payload.hasNext }); this.notify(); }
  end() { this.ended = true; this.notify(); }
  private notify() { for (const wake of this.waiting) wake(); this.waiting.clear(); }
  async *read(): AsyncGenerator<PayloadText> {
    for (let i = 0; ; i++) {
      while (i >= this.entries.length && !this.ended) await new Promise<void>((resolve) => this.waiting.add(resolve));
      if (i >= this.entries.length) return;
      yield this.entries[i]!;
    }
  }
}

/** Every fetch error of the deferred parts, once each (and every part it nests) has run. */
export async function settledErrors(children: readonly DeferredPart[]): Promise<GraphQLError[]> {
  const parts = await Promise.all(children.map((child) => child.executed));
  const nested = await Promise.all(parts.map((part) => settledErrors(part.children)));
  return parts.flatMap((part, i) => [...part.errors, ...nested[i]!]);
}

export interface DeliverOptions {
  operation: Operation;
  variables?: Record<string, unknown>;
  unfilteredData: Data;
  root: PartState;
  maxResponseObjects: number;
  introspectionHandling: (selection: FieldSelection) => unknown;
}

export interface IncrementalDelivery {
  /** The primary part, shaped (its errors are added by the executor). */
  initial(): { data: Data | null; errors: GraphQLError[] };
  /** The subsequent payloads as JSON texts; each call reads them all from the first. */
  payloads(): AsyncIterable<PayloadText>;
  /** Settles once every deferred fetch has: with the errors they met (metrics, bounds). */
  readonly finished: Promise<readonly GraphQLError[]>;
}

export function deliverParts({ operation, variables, unfilteredData, root, maxResponseObjects, introspectionHandling }: DeliverOptions): IncrementalDelivery {
  const rootType = operation.schema().schemaDefinition.rootType(operation.rootKind)!;
  let sent: Data | null = null;
  let objects = 0;
  const log = new PayloadLog();
  let started = false;

  const shape = (part: PartState, type: CompositeType, at: { path: Path; input: Data }, handleIntrospection = false) => {
    const selectionSet = parseSelectionSet({ parentType: type, source: part.subselection!, variableDefinitions: operation.variableDefinitions, validate: false });
    return shapeSelectionSet({
      operation, variables, selectionSet, parentType: type, path: at.path, input: at.input,
      introspectionHandling: handleIntrospection ? introspectionHandling : undefined,
    });
  };

  const payloadOf = (part: PartState): SubsequentPayload | null => {
    if (part.subselection === undefined) return part.errors.length ? { errors: part.errors.map(formatError), hasNext: true } : null;
    const type = typeAtPath(operation, part.queryPath);
    const items: IncrementalItem[] = targets(operation, sent, unfilteredData, part.queryPath).map(({ path, input, into }) => {
      const { data, errors } = shape(part, type, { path, input });
      if (data) mergeInto(into, data);
      objects += countObjects(data, maxResponseObjects);
      // As upstream's post-processing: value completion errors only when fetching had none, and as an extension.
      const completion = errors.length && !part.errors.length ? { extensions: { valueCompletion: errors.map(formatError) } } : {};
      return { data, path, ...(part.label === undefined ? {} : { label: part.label }), ...completion };
    });
    const fetchErrors = part.errors.map(formatError);
    if (!items.length) return fetchErrors.length ? { errors: fetchErrors, hasNext: true } : null;
    if (fetchErrors.length) items[0]!.errors = [...fetchErrors, ...(items[0]!.errors ?? [])];
    return { incremental: items, hasNext: true };
  };

  async function pump() {
    const ready = new ReadyParts();
    let outstanding = 0;
    const schedule = (children: readonly DeferredPart[]) => {
      for (const child of children) { outstanding += 1; void child.executed.then((part) => ready.push(part)); }
    };
    schedule(root.children);
    while (outstanding > 0) {
      const part = await ready.next();
      outstanding -= 1;
      const payload = payloadOf(part);
      schedule(part.children);
      if (objects > maxResponseObjects) {
        log.append({ errors: [tooLarge(maxResponseObjects)], hasNext: false });
        break;
      }
      if (payload) log.append({ ...payload, hasNext: outstanding > 0 });
      else if (outstanding === 0) log.append({ hasNext: false });
    }
    log.end();
  }

  const finished = settledErrors(root.children);

  return {
    initial() {
      // The planner leaves introspection (root __typename included) out of the primary's subselection: put back the root's own.
      const introspection = operation.selectionSet.selections()
        .filter((selection) => selection.kind === 'FieldSelection' && selection.element.name.startsWith('__')).map(String);
      const inner = (root.subselection ?? '').trim().replace(/^\{([\s\S]*)\}$/, '$1');
      const primary = { ...root, subselection: `{ ${inner} ${introspection.join(' ')} }` };
      const shaped = primary.subselection.replace(/[{}\s]/g, '') === ''
        ? { data: Object.create(null) as Data, errors: [] as GraphQLError[] }
        : shape(primary, rootType, { path: [], input: unfilteredData }, true);
      sent = shaped.data === null ? null : structuredClone(shaped.data);
      objects = countObjects(shaped.data, maxResponseObjects);
      return shaped;
    },
    payloads() {
      if (!started) { started = true; void pump(); }
      return log.read();
    },
    finished,
  };
}
