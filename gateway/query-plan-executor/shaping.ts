/*
 * FORK of @apollo/gateway 2.14.4, dist/resultShaping.js (Elastic License 2.0, as the package),
 * ported to TypeScript; see fork.ts for the version check. What changed:
 * - `shapeSelectionSet` shapes a selection set on any parent type at any path (a deferred fragment's
 *   subselection on each object it applies to), not only an operation's root selection set; `computeResponse`
 *   is that on the root;
 * - `skipped` treats an absent `if` variable as "not skipped" rather than asserting (variables are coerced
 *   before execution; a deferred subselection may carry a condition whose variable has a default), and
 *   answers at once for an element without directives (most: a large list's shaping spent its time there).
 * Everything else (null propagation, __typename, leaf checks, messages) is as upstream.
 */
import {
  assert, ERRORS, isCompositeType, isListType, isNonNullType, isObjectType, isSubtype, isValidLeafValue, typenameFieldName, Variable,
  type CompositeType, type Field, type FieldSelection, type FragmentElement, type NamedType, type Operation, type OutputType, type Schema, type SelectionSet,
} from '@apollo/federation-internals';
import type { GraphQLError } from 'graphql';

type Path = (string | number)[];
type Data = Record<string, unknown>;

interface Parameters {
  schema: Schema;
  variables: Record<string, unknown>;
  errors: GraphQLError[];
  introspectionHandling: (selection: FieldSelection) => unknown;
}

const hasOwn = (object: object, key: string) => Object.prototype.hasOwnProperty.call(object, key);
const getOwn = (object: Data, key: string) => (hasOwn(object, key) ? object[key] : undefined);

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

function applySelectionSet(input: Data, selectionSet: SelectionSet, output: Data, parameters: Parameters, path: Path, parentType: CompositeType): ApplyResult {
  for (const selection of selectionSet.selections()) {
    if (skipped(selection.element, parameters)) continue;
    if (selection.kind === 'FieldSelection') {
      const field = selection.element;
      const responseName = field.responseName();
      const outputValue = output[responseName];
      if (field.definition.isSchemaIntrospectionField()) {
        if (outputValue === undefined) output[responseName] = parameters.introspectionHandling(selection);
        continue;
      }
      let inputValue = getOwn(input, responseName) ?? null;
      if (field.name === typenameFieldName) {
        if (outputValue === undefined) {
          if (inputValue === null && responseName !== typenameFieldName) inputValue = input[typenameFieldName] ?? null;
          const type = typeof inputValue === 'string' ? parameters.schema.type(inputValue) ?? parentType : parentType;
          if (!isObjectType(type)) return ApplyResult.NULL_BUBBLE_UP;
          output[responseName] = type.name;
        }
        continue;
      }
      path.push(responseName);
      const { updated, isInvalid } = updateOutputValue(outputValue, field.definition.type!, inputValue, selection.selectionSet, path, parameters, parentType);
      output[responseName] = updated;
      path.pop();
      if (isInvalid) return ApplyResult.NULL_BUBBLE_UP;
    } else {
      const fragment = selection.element;
      const typename = input[typenameFieldName];
      assert(!typename || typeof typename === 'string', () => `Got unexpected value for __typename: ${String(typename)}`);
      if (typeConditionApplies(parameters.schema, fragment.typeCondition, typename, parentType)) {
        const result = applySelectionSet(input, selection.selectionSet, output, parameters, path, fragment.typeCondition ?? parentType);
        if (result === ApplyResult.NULL_BUBBLE_UP) return ApplyResult.NULL_BUBBLE_UP;
      }
    }
  }
  return ApplyResult.OK;
}

interface Updated { updated: unknown; isInvalid?: boolean; hasErrors?: boolean }

function updateOutputValue(
  outputValue: unknown, type: OutputType, inputValue: unknown, selectionSet: SelectionSet | undefined, path: Path, parameters: Parameters, parentType: CompositeType,
): Updated {
  assert(inputValue !== undefined, 'Should not pass undefined for `inputValue` to this method');
  if (outputValue === null || (outputValue !== undefined && !selectionSet)) return { updated: outputValue };
  if (isNonNullType(type)) {
    const { updated, hasErrors } = updateOutputValue(outputValue, type.ofType, inputValue, selectionSet, path, parameters, parentType);
    if (updated === null) {
      if (!hasErrors) {
        parameters.errors.push(ERRORS.INVALID_GRAPHQL.err(`Cannot return null for non-nullable ${lastElementDescription(path, type.ofType, parentType)}.`, { path: Array.from(path) }));
      }
      return { updated, isInvalid: true, hasErrors: true };
    }
    return { updated };
  }
  if (inputValue === null) return { updated: null };
  if (isListType(type)) {
    assert(Array.isArray(inputValue), () => `Invalid non-list value ${String(inputValue)} returned by subgraph for list type ${type}`);
    assert(outputValue === undefined || Array.isArray(outputValue), () => `Invalid non-list value ${String(outputValue)} returned by subgraph for list type ${type}`);
    const outputList = outputValue === undefined ? new Array<unknown>(inputValue.length).fill(undefined) : outputValue as unknown[];
    assert(inputValue.length === outputList.length, () => `[${inputValue}].length (${inputValue.length}) !== [${outputList}].length (${outputList.length})`);
    let shouldNullify = false;
    let hasErrors = false;
    const updated = outputList.map((element, index) => {
      path.push(index);
      const result = updateOutputValue(element, type.ofType, inputValue[index], selectionSet, path, parameters, parentType);
      path.pop();
      shouldNullify ||= !!result.isInvalid;
      hasErrors ||= !!result.hasErrors;
      return result.updated;
    });
    return { updated: shouldNullify ? null : updated, hasErrors };
  }
  if (isCompositeType(type)) {
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
    const outputObject = (outputValue ?? Object.create(null)) as Data;
    const result = applySelectionSet(inputValue as Data, selectionSet, outputObject, parameters, path, objectType);
    const hasErrors = result === ApplyResult.NULL_BUBBLE_UP;
    return { updated: hasErrors ? null : outputObject, hasErrors };
  }
  assert(outputValue === undefined, () => `Excepted output to be undefined but got ${type} for type ${type}`);
  const isValid = isValidLeafValue(parameters.schema, inputValue, type);
  if (!isValid) {
    parameters.errors.push(ERRORS.INVALID_GRAPHQL.err(`Invalid value found for ${lastElementDescription(path, type, parentType)}.`, { path: Array.from(path) }));
  }
  return { updated: isValid ? inputValue : null, hasErrors: !isValid };
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

/** `input` shaped by `selectionSet` as an answer holds it; null when a non-null field is null (propagation stops here). */
export function shapeSelectionSet({ operation, variables, selectionSet, parentType, path, input, introspectionHandling }: ShapeInput) {
  const parameters: Parameters = {
    schema: operation.schema(),
    variables: { __proto__: null, ...operation.collectDefaultedVariableValues(), ...variables },
    errors: [],
    introspectionHandling: introspectionHandling ?? (() => null),
  };
  const data = Object.create(null) as Data;
  const result = applySelectionSet(input, selectionSet, data, parameters, [...path], parentType);
  return { data: result === ApplyResult.NULL_BUBBLE_UP ? null : data, errors: parameters.errors };
}

/** The operation's whole answer from the fetched data (upstream's computeResponse). */
export function computeResponse({ operation, variables, input, introspectionHandling }: {
  operation: Operation; variables?: Record<string, unknown>; input: Data | null | undefined; introspectionHandling: (selection: FieldSelection) => unknown;
}) {
  if (!input) return { data: input, errors: [] as GraphQLError[] };
  const parentType = operation.schema().schemaDefinition.rootType(operation.rootKind)!;
  return shapeSelectionSet({ operation, variables, selectionSet: operation.selectionSet, parentType, path: [], input, introspectionHandling });
}
