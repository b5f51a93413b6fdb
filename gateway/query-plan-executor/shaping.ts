/*
 * FORK of @apollo/gateway 2.14.4, dist/resultShaping.js (Elastic License 2.0, as the package),
 * ported to TypeScript; see fork.ts for the version check. What changed:
 * - `shapeSelectionSet` shapes a selection set on any parent type at any path (a deferred fragment's
 *   subselection on each object it applies to), not only an operation's root selection set; `computeResponse`
 *   is that on the root;
 * - `skipped` treats an absent `if` variable as "not skipped" rather than asserting (variables are coerced
 *   before execution; a deferred subselection may carry a condition whose variable has a default), and
 *   answers at once for an element without directives (most: a large list's shaping spent its time there);
 * - the walk is a generator that pauses between a list's elements once its slice of time is spent;
 *   a value that needs no walk (a leaf) is a plain function's (`plainValue`), and so is an object of
 *   leaf fields only (`flatValue`: a list's rows, no generator per row). `shapeSelectionSet` (a
 *   deferred part) runs the walk through in one piece, and so does `computeResponse` except in the
 *   background lane (a subscription's execution), where each pause is an event-loop turn
 *   (subgraphs/platform/lanes.ts): shaping a large result never holds the loop longer than a slice;
 * - output objects are plain objects, not Object.create(null) (see setOutput).
 * Everything else (null propagation, __typename, leaf checks, messages) is as upstream.
 */
import {
  assert, ERRORS, isCompositeType, isLeafType, isListType, isNonNullType, isObjectType, isSubtype, isValidLeafValue, typenameFieldName, Variable,
  type CompositeType, type Field, type FieldSelection, type FragmentElement, type NamedType, type Operation, type OutputType, type Schema, type SelectionSet,
} from '@apollo/federation-internals';
import type { GraphQLError } from 'graphql';
import { inBackgroundLane, turn } from '../../subgraphs/platform/lanes.ts';

/** How long shaping in the background lane runs before it gives the event loop back. */
const SHAPING_SLICE_MS = 2;

type Path = (string | number)[];
type Data = Record<string, unknown>;

interface Parameters {
  schema: Schema;
  variables: Record<string, unknown>;
  errors: GraphQLError[];
  introspectionHandling: (selection: FieldSelection) => unknown;
  /** When the slice ends (performance.now()); Infinity: never paused. */
  until: number;
}

/** A part of the walk: pauses (yields) when its slice is spent, and returns its outcome. */
type Walk<T> = Generator<void, T>;

const hasOwn = (object: object, key: string) => Object.prototype.hasOwnProperty.call(object, key);
const getOwn = (object: Data, key: string) => (hasOwn(object, key) ? object[key] : undefined);

/*
 * Output objects are plain `{}`, not upstream's Object.create(null): a dictionary per object is
 * slower to build and to serialise. So they are read as own properties only (`toString` is a valid
 * alias), and `__proto__`, the one name assignment does not make an own property, is defined.
 */
function setOutput(object: Data, key: string, value: unknown) {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

const ApplyResult = { OK: 0, NULL_BUBBLE_UP: 1 } as const;
type ApplyResult = (typeof ApplyResult)[keyof typeof ApplyResult];

function ifValue(directive: { arguments(): unknown }, variables: Record<string, unknown>): boolean {
  const condition = (directive.arguments() as { if?: unknown }).if;
  if (condition instanceof Variable) return variables[condition.name] === true;
  return condition === true;
}

function skipped(element: Field | FragmentElement, { schema, variables }: Parameters) {
  // Most elements carry no directive: no lookup (two filtered copies) per element of every object of a list.
  if (element.appliedDirectives.length === 0) return false;
  const skip = element.appliedDirectivesOf(schema.skipDirective())[0];
  const include = element.appliedDirectivesOf(schema.includeDirective())[0];
  return (skip && ifValue(skip, variables)) || (include && !ifValue(include, variables));
}

function typeConditionApplies(schema: Schema, condition: CompositeType | undefined, typename: unknown, parentType: CompositeType) {
  if (!condition) return true;
  if (typename) {
    const type = schema.type(typename as string);
    return !!type && isSubtype(condition, type);
  }
  return isSubtype(condition, parentType);
}

function lastElementDescription(path: Path, currentType: unknown, parentType: NamedType) {
  const element = path[path.length - 1];
  assert(element !== undefined, 'Should not have been called on an empty path');
  return typeof element === 'string' ? `field ${parentType}.${element}` : `array element of type ${currentType} at index ${element}`;
}

function* applySelectionSet(input: Data, selectionSet: SelectionSet, output: Data, parameters: Parameters, path: Path, parentType: CompositeType): Walk<ApplyResult> {
  for (const selection of selectionSet.selections()) {
    if (skipped(selection.element, parameters)) continue;
    if (selection.kind === 'FieldSelection') {
      const field = selection.element;
      const responseName = field.responseName();
      const outputValue = getOwn(output, responseName);
      if (field.definition.isSchemaIntrospectionField()) {
        if (outputValue === undefined) setOutput(output, responseName, parameters.introspectionHandling(selection));
        continue;
      }
      let inputValue = getOwn(input, responseName) ?? null;
      if (field.name === typenameFieldName) {
        if (outputValue === undefined) {
          if (inputValue === null && responseName !== typenameFieldName) inputValue = input[typenameFieldName] ?? null;
          const type = typeof inputValue === 'string' ? parameters.schema.type(inputValue) ?? parentType : parentType;
          if (!isObjectType(type)) return ApplyResult.NULL_BUBBLE_UP;
          setOutput(output, responseName, type.name);
        }
        continue;
      }
      path.push(responseName);
      const type = field.definition.type!;
      const { updated, isInvalid } = plainValue(outputValue, type, inputValue, selection.selectionSet, path, parameters, parentType)
        ?? flatValue(outputValue, type, inputValue, selection.selectionSet, path, parameters, parentType)
        ?? (yield* updateOutputValue(outputValue, type, inputValue, selection.selectionSet, path, parameters, parentType));
      setOutput(output, responseName, updated);
      path.pop();
      if (isInvalid) return ApplyResult.NULL_BUBBLE_UP;
    } else {
      const fragment = selection.element;
      const typename = input[typenameFieldName];
      assert(!typename || typeof typename === 'string', () => `Got unexpected value for __typename: ${String(typename)}`);
      if (typeConditionApplies(parameters.schema, fragment.typeCondition, typename, parentType)) {
        const result = yield* applySelectionSet(input, selection.selectionSet, output, parameters, path, fragment.typeCondition ?? parentType);
        if (result === ApplyResult.NULL_BUBBLE_UP) return ApplyResult.NULL_BUBBLE_UP;
      }
    }
  }
  return ApplyResult.OK;
}

interface Updated { updated: unknown; isInvalid?: boolean; hasErrors?: boolean }

/** A non-null position's outcome from its value's: null there is invalid (an error, unless one was raised below). */
function nonNull(value: Updated, path: Path, type: OutputType, parameters: Parameters, parentType: CompositeType): Updated {
  if (value.updated !== null) return { updated: value.updated };
  if (!value.hasErrors) {
    parameters.errors.push(ERRORS.INVALID_GRAPHQL.err(`Cannot return null for non-nullable ${lastElementDescription(path, type, parentType)}.`, { path: Array.from(path) }));
  }
  return { updated: null, isInvalid: true, hasErrors: true };
}

/**
 * The outcome of a value that needs no walk (set already, null, a leaf, a non-null leaf), else
 * undefined (a list or an object: updateOutputValue). Called without a generator: most values are leaves.
 */
function plainValue(
  outputValue: unknown, type: OutputType, inputValue: unknown, selectionSet: SelectionSet | undefined, path: Path, parameters: Parameters, parentType: CompositeType,
): Updated | undefined {
  assert(inputValue !== undefined, 'Should not pass undefined for `inputValue` to this method');
  if (outputValue === null || (outputValue !== undefined && !selectionSet)) return { updated: outputValue };
  if (isNonNullType(type)) {
    if (selectionSet || isListType(type.ofType)) return undefined;
    return nonNull(plainValue(outputValue, type.ofType, inputValue, selectionSet, path, parameters, parentType)!, path, type.ofType, parameters, parentType);
  }
  if (inputValue === null) return { updated: null };
  if (isListType(type) || isCompositeType(type)) return undefined;
  assert(outputValue === undefined, () => `Excepted output to be undefined but got ${type} for type ${type}`);
  const isValid = isValidLeafValue(parameters.schema, inputValue, type);
  if (!isValid) {
    parameters.errors.push(ERRORS.INVALID_GRAPHQL.err(`Invalid value found for ${lastElementDescription(path, type, parentType)}.`, { path: Array.from(path) }));
  }
  return { updated: isValid ? inputValue : null, hasErrors: !isValid };
}

/** The leaf fields of a selection set without directives, fragments or __typename, else null (flatValue). */
const flatSelections = new WeakMap<SelectionSet, { responseName: string; type: OutputType }[] | null>();

function flatFieldsOf(selectionSet: SelectionSet) {
  let fields = flatSelections.get(selectionSet);
  if (fields !== undefined) return fields;
  fields = [];
  for (const selection of selectionSet.selections()) {
    const field = selection.kind === 'FieldSelection' ? selection.element : undefined;
    const type = field?.definition.type;
    if (!field || !type || field.appliedDirectives.length || field.name === typenameFieldName
      || field.definition.isSchemaIntrospectionField() || !isLeafType(isNonNullType(type) ? type.ofType : type)) {
      fields = null;
      break;
    }
    fields.push({ responseName: field.responseName(), type });
  }
  flatSelections.set(selectionSet, fields);
  return fields;
}

/**
 * The outcome of an object not shaped yet, without __typename, whose selection set holds leaf fields
 * only (a list's rows: most of a large answer), shaped as applySelectionSet would, in a plain
 * function: no generator and no iterator results per object. Else undefined (updateOutputValue).
 */
function flatValue(
  outputValue: unknown, type: OutputType, inputValue: unknown, selectionSet: SelectionSet | undefined, path: Path, parameters: Parameters, parentType: CompositeType,
): Updated | undefined {
  const objectType = isNonNullType(type) ? type.ofType : type;
  if (outputValue !== undefined || !selectionSet || !isCompositeType(objectType) || inputValue === null || typeof inputValue !== 'object') return undefined;
  const input = inputValue as Data;
  const fields = input[typenameFieldName] === undefined ? flatFieldsOf(selectionSet) : null;
  if (!fields) return undefined;
  const output: Data = {};
  let value: Updated = { updated: output };
  for (const { responseName, type: fieldType } of fields) {
    path.push(responseName);
    const leaf = plainValue(getOwn(output, responseName), fieldType, getOwn(input, responseName) ?? null, undefined, path, parameters, objectType)!;
    setOutput(output, responseName, leaf.updated);
    path.pop();
    if (leaf.isInvalid) {
      value = { updated: null, hasErrors: true };
      break;
    }
  }
  return objectType === type ? value : nonNull(value, path, objectType, parameters, parentType);
}

function* updateOutputValue(
  outputValue: unknown, type: OutputType, inputValue: unknown, selectionSet: SelectionSet | undefined, path: Path, parameters: Parameters, parentType: CompositeType,
): Walk<Updated> {
  const plain = plainValue(outputValue, type, inputValue, selectionSet, path, parameters, parentType);
  if (plain) return plain;
  if (isNonNullType(type)) {
    const value = yield* updateOutputValue(outputValue, type.ofType, inputValue, selectionSet, path, parameters, parentType);
    return nonNull(value, path, type.ofType, parameters, parentType);
  }
  if (isListType(type)) {
    assert(Array.isArray(inputValue), () => `Invalid non-list value ${String(inputValue)} returned by subgraph for list type ${type}`);
    assert(outputValue === undefined || Array.isArray(outputValue), () => `Invalid non-list value ${String(outputValue)} returned by subgraph for list type ${type}`);
    const outputList = outputValue === undefined ? new Array<unknown>(inputValue.length).fill(undefined) : outputValue as unknown[];
    assert(inputValue.length === outputList.length, () => `[${inputValue}].length (${inputValue.length}) !== [${outputList}].length (${outputList.length})`);
    let shouldNullify = false;
    let hasErrors = false;
    const updated = new Array<unknown>(outputList.length);
    for (let index = 0; index < outputList.length; index++) {
      if (parameters.until !== Infinity && performance.now() > parameters.until) yield;
      path.push(index);
      const [element, input] = [outputList[index], inputValue[index]];
      const result = plainValue(element, type.ofType, input, selectionSet, path, parameters, parentType)
        ?? flatValue(element, type.ofType, input, selectionSet, path, parameters, parentType)
        ?? (yield* updateOutputValue(element, type.ofType, input, selectionSet, path, parameters, parentType));
      path.pop();
      shouldNullify ||= !!result.isInvalid;
      hasErrors ||= !!result.hasErrors;
      updated[index] = result.updated;
    }
    return { updated: shouldNullify ? null : updated, hasErrors };
  }
  assert(isCompositeType(type), () => `Unexpected type ${type}`);
  assert(selectionSet, () => `Invalid empty selection set for composite type ${type}`);
  assert(typeof inputValue === 'object', () => `Invalid non-object value ${String(inputValue)} returned by subgraph for composite type ${type}`);
  assert(outputValue === undefined || typeof outputValue === 'object', () => `Invalid non-object value ${String(inputValue)} returned by subgraph for composite type ${type}`);
  const inputTypename = (inputValue as Data)[typenameFieldName];
  assert(inputTypename === undefined || typeof inputTypename === 'string', () => `Invalid non-string value ${String(inputTypename)} for __typename at ${path}`);
  let objectType: CompositeType = type;
  if (inputTypename) {
    const typenameType = parameters.schema.type(inputTypename);
    if (!typenameType || !isCompositeType(typenameType)) {
      parameters.errors.push(ERRORS.INVALID_GRAPHQL.err(`Invalid __typename found for object at ${lastElementDescription(path, type, parentType)}.`, { path: Array.from(path) }));
      return { updated: null, hasErrors: true };
    }
    objectType = typenameType;
  }
  const outputObject = (outputValue ?? {}) as Data;
  const result = yield* applySelectionSet(inputValue as Data, selectionSet, outputObject, parameters, path, objectType);
  const hasErrors = result === ApplyResult.NULL_BUBBLE_UP;
  return { updated: hasErrors ? null : outputObject, hasErrors };
}

export interface ShapeInput {
  operation: Operation;
  variables?: Record<string, unknown>;
  selectionSet: SelectionSet;
  parentType: CompositeType;
  /** Where the object is in the answer: the path of the errors raised in it. */
  path: Path;
  input: Data;
  introspectionHandling?: (selection: FieldSelection) => unknown;
}

type Shaped = { data: Data | null; errors: GraphQLError[] };

/** The walk that shapes `input` by `selectionSet`, and what it fills in. */
function shaping({ operation, variables, selectionSet, parentType, path, input, introspectionHandling }: ShapeInput) {
  const parameters: Parameters = {
    schema: operation.schema(),
    variables: { __proto__: null, ...operation.collectDefaultedVariableValues(), ...variables },
    errors: [],
    introspectionHandling: introspectionHandling ?? (() => null),
    until: Infinity,
  };
  const data: Data = {};
  const walk = applySelectionSet(input, selectionSet, data, parameters, [...path], parentType);
  const shaped = (result: ApplyResult): Shaped => ({ data: result === ApplyResult.NULL_BUBBLE_UP ? null : data, errors: parameters.errors });
  return { walk, parameters, shaped };
}

/** `input` shaped by `selectionSet` as an answer holds it, in one piece; null when a non-null field is null (propagation stops here). */
export function shapeSelectionSet(input: ShapeInput): Shaped {
  const { walk, shaped } = shaping(input);
  const step = walk.next();
  assert(step.done, 'shaping without a slice never pauses');
  return shaped(step.value);
}

/** As shapeSelectionSet; in the background lane, in slices of SHAPING_SLICE_MS with a turn between them. */
async function shapeInSlices(input: ShapeInput): Promise<Shaped> {
  if (!inBackgroundLane()) return shapeSelectionSet(input);
  const { walk, parameters, shaped } = shaping(input);
  for (;;) {
    parameters.until = performance.now() + SHAPING_SLICE_MS;
    const step = walk.next();
    if (step.done) return shaped(step.value);
    await turn();
  }
}

/** The operation's whole answer from the fetched data (upstream's computeResponse). */
export async function computeResponse({ operation, variables, input, introspectionHandling }: {
  operation: Operation; variables?: Record<string, unknown>; input: Data | null | undefined; introspectionHandling: (selection: FieldSelection) => unknown;
}): Promise<{ data: Data | null | undefined; errors: GraphQLError[] }> {
  if (!input) return { data: input, errors: [] };
  const parentType = operation.schema().schemaDefinition.rootType(operation.rootKind)!;
  return shapeInSlices({ operation, variables, selectionSet: operation.selectionSet, parentType, path: [], input, introspectionHandling });
}
