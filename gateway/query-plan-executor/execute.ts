/*
 * FORK of @apollo/gateway 2.14.4, dist/executeQueryPlan.js (Elastic License 2.0, as the package), ported to
 * TypeScript; fork.ts pins the version (test/gateway/query-plan-executor-fork.test.ts fails on another one).
 * What changed:
 * - `Defer` nodes are executed instead of asserting "@defer support is not available in the gateway": the
 *   primary selection first, then every deferred node, in parallel, once the primary's fetches are done
 *   and the event loop has turned, each in a part of its own (errors, shaping);
 *   see deferred.ts for how the parts are shaped and delivered;
 * - with `incremental` false (a client that does not accept multipart/mixed), every deferred node is awaited
 *   and the whole operation is shaped at once: the ordinary answer of the same query without @defer;
 * - no Apollo usage-reporting query-plan trace (ftv1) is built, nor `nonFtv1ErrorPaths` kept: the project
 *   reports to OpenTelemetry, whose spans (gateway.execute, gateway.fetch, gateway.postprocessing) are kept;
 * - `Subscription` plans still throw: subscriptions are run by gateway/subscriptions.
 * Fetching, entity representations, rewrites, error paths and introspection are as upstream.
 */
import { createRequire } from 'node:module';
import {
  assert, ERRORS, errorCodeDef, operationFromDocument, type Operation, type Schema,
} from '@apollo/federation-internals';
import type { GraphQLDataSource } from '@apollo/gateway';
import type { OperationContext } from '@apollo/gateway/dist/operationContext.js';
import type * as DataRewrites from '@apollo/gateway/dist/dataRewrites.js';
import type * as DeepMerge from '@apollo/gateway/dist/utilities/deepMerge.js';
import type * as OpenTelemetry from '@apollo/gateway/dist/utilities/opentelemetry.js';
import type * as DataSourceTypes from '@apollo/gateway/dist/datasources/types.js';
import {
  evaluateCondition, getResponseName, type DeferNode, type DeferredNode, type FetchNode, type PlanNode, type QueryPlan,
  type QueryPlanSelectionNode, type ResponsePath,
} from '@apollo/query-planner';
import type { GatewayExecutionResult, GatewayGraphQLRequestContext } from '@apollo/server-gateway-interface';
import type * as GraphQL from 'graphql';
import type { GraphQLSchema, SelectionNode, VariableDefinitionNode } from 'graphql';
import { computeResponse } from './shaping.ts';
import { deliverParts, settledErrors, type DeferredPart, type IncrementalDelivery } from './deferred.ts';
import { inSpan, spanFailed, type TelemetryConfig } from './spans.ts';

// The CommonJS builds the gateway itself runs with: its classes (GraphQLError) and enums are these.
const require = createRequire(import.meta.url);
const { executeSync, GraphQLError, Kind, OperationTypeNode, TypeNameMetaFieldDef, visit } = require('graphql') as typeof GraphQL;
const { applyRewrites, isObjectOfType } = require('@apollo/gateway/dist/dataRewrites.js') as typeof DataRewrites;
const { deepMerge } = require('@apollo/gateway/dist/utilities/deepMerge.js') as typeof DeepMerge;
const { tracer, OpenTelemetrySpanNames } = require('@apollo/gateway/dist/utilities/opentelemetry.js') as typeof OpenTelemetry;
const { GraphQLDataSourceRequestKind } = require('@apollo/gateway/dist/datasources/types.js') as typeof DataSourceTypes;

export type ServiceMap = Record<string, GraphQLDataSource>;
type ResultMap = Record<string, unknown>;

interface ResultCursor { path: ResponsePath; data: ResultMap | ResultMap[]; fullResult: ResultMap }

/** One part of the answer being fetched: the primary selection (queryPath []) or a deferred fragment. */
export interface PartState {
  queryPath: string[];
  label?: string;
  /** The part's selection set, relative to `queryPath`; on the root part, absent until a Defer node gives it. */
  subselection?: string;
  errors: GraphQL.GraphQLError[];
  /** Deferred fragments met while executing this part (its Defer node's), each running or scheduled. */
  children: DeferredPart[];
}

interface ExecutionContext {
  operationContext: OperationContext;
  operation: Operation;
  serviceMap: ServiceMap;
  requestContext: GatewayGraphQLRequestContext;
  supergraphSchema: GraphQLSchema;
  errors: GraphQL.GraphQLError[];
  part: PartState;
  root: ResultCursor;
  telemetry: TelemetryConfig;
}

const isNotNullOrUndefined = <T>(value: T | null | undefined): value is T => value !== null && value !== undefined;
const hasOwn = (object: object, key: string) => Object.prototype.hasOwnProperty.call(object, key);
const getOwn = (object: ResultMap, key: string) => (hasOwn(object, key) ? object[key] : undefined);

function collectUsedVariables(node: SelectionNode) {
  const used = new Set<string>();
  visit(node, { Variable: ({ name }) => { used.add(name.value); } });
  return used;
}

function makeIntrospectionQueryDocument(selection: SelectionNode, variableDefinitions?: readonly VariableDefinitionNode[]): GraphQL.DocumentNode {
  const used = collectUsedVariables(selection);
  const usedDefinitions = variableDefinitions?.filter((def) => used.has(def.variable.name.value));
  assert(used.size === (usedDefinitions?.length ?? 0), () => `Should have found all used variables ${[...used]} in definitions ${JSON.stringify(variableDefinitions)}`);
  return {
    kind: Kind.DOCUMENT,
    definitions: [{ kind: Kind.OPERATION_DEFINITION, operation: OperationTypeNode.QUERY, variableDefinitions: usedDefinitions, selectionSet: { kind: Kind.SELECTION_SET, selections: [selection] } }],
  };
}

function executeIntrospection(schema: GraphQLSchema, selection: GraphQL.FieldNode, variableDefinitions: readonly VariableDefinitionNode[] | undefined, variableValues: Record<string, unknown> | undefined) {
  const { data, errors } = executeSync({ schema, document: makeIntrospectionQueryDocument(selection, variableDefinitions), rootValue: {}, variableValues });
  assert(!errors || errors.length === 0, () => `Introspection query for ${JSON.stringify(selection)} should not have failed but got ${JSON.stringify(errors)}`);
  assert(data, () => `Introspection query for ${JSON.stringify(selection)} should not have failed`);
  return getOwn(data, selection.alias?.value ?? selection.name.value);
}

export interface ExecutedPlan {
  result: GatewayExecutionResult;
  /** The deferred fragments still to send, when the answer is incremental and the plan deferred any. */
  delivery?: IncrementalDelivery;
}

export interface ExecuteOptions {
  /** Send deferred fragments as parts (the client accepts multipart/mixed; deferSpec=20220824); else one merged answer. */
  incremental: boolean;
  /** GRAPHQL_MAX_RESPONSE_OBJECTS: counted over every part of an incremental answer. */
  maxResponseObjects: number;
  telemetry?: TelemetryConfig;
}

/** Operations built from their document, by API schema and operation node (Apollo Server keeps one parsed document per query text). */
const operations = new WeakMap<Schema, WeakMap<object, Operation>>();

/**
 * The operation as the shaping step reads it, built once per document: a subscription runs the same
 * query on every event, and building it is a walk of the whole document (as long as shaping a small result).
 */
function operationOf(apiSchema: Schema, operationContext: OperationContext): Operation {
  let built = operations.get(apiSchema);
  if (!built) operations.set(apiSchema, built = new WeakMap<object, Operation>());
  const known = built.get(operationContext.operation);
  // Keyed by the operation node; its fragments are its document's, the same with it.
  if (known) return known;
  const operation = operationFromDocument(apiSchema, {
    kind: Kind.DOCUMENT, definitions: [operationContext.operation, ...Object.values(operationContext.fragments)],
  }, { validate: false });
  built.set(operationContext.operation, operation);
  return operation;
}

export async function executeQueryPlan(
  queryPlan: QueryPlan, serviceMap: ServiceMap, requestContext: GatewayGraphQLRequestContext, operationContext: OperationContext,
  supergraphSchema: GraphQLSchema, apiSchema: Schema, options: ExecuteOptions,
): Promise<ExecutedPlan> {
  const logger = requestContext.logger || console;
  const telemetry = options.telemetry;
  return inSpan(OpenTelemetrySpanNames.EXECUTE, {}, telemetry, async (span) => {
    let operation: Operation;
    try {
      operation = operationOf(apiSchema, operationContext);
    } catch (err) {
      if (err instanceof GraphQLError) return { result: { errors: [err] } };
      throw err;
    }
    const unfilteredData = Object.create(null) as ResultMap;
    const root: ResultCursor = { path: [], data: unfilteredData, fullResult: unfilteredData };
    const part: PartState = { queryPath: [], errors: [], children: [] };
    const context: ExecutionContext = {
      operationContext, operation, serviceMap, requestContext, supergraphSchema, errors: part.errors, part, root, telemetry,
    };
    if (queryPlan.node?.kind === 'Subscription') throw new Error('Execution of subscriptions not supported by gateway');
    if (queryPlan.node) await executeNode(context, queryPlan.node, root);

    const variables = requestContext.request.variables;
    const introspectionHandling = (f: Parameters<Parameters<typeof computeResponse>[0]['introspectionHandling']>[0]) =>
      executeIntrospection(operationContext.schema, f.expandFragments().toSelectionNode(), operationContext.operation.variableDefinitions, variables);
    const incremental = options.incremental && part.children.length > 0;
    if (!incremental) {
      // One answer: every deferred fragment (at any depth) fetched, then the whole operation shaped at once.
      const errors = [...part.errors, ...(await settledErrors(part.children))];
      context.errors = errors;
      const result = await postProcess(() => computeResponse({ operation, variables, input: unfilteredData, introspectionHandling }), errors, logger, telemetry);
      if (result.errors) spanFailed(span, result.errors, telemetry);
      return { result };
    }
    const delivery = deliverParts({ operation, variables, unfilteredData, root: part, maxResponseObjects: options.maxResponseObjects, introspectionHandling });
    const result = await postProcess(() => delivery.initial(), part.errors, logger, telemetry);
    if (result.errors) spanFailed(span, result.errors, telemetry);
    return { result, delivery };
  });
}

type Shaped = { data: unknown; errors: GraphQL.GraphQLError[] };

/** The shaping step and its span, as upstream's post-processing (errors of shaping only reported when fetching had none). */
async function postProcess(shape: () => Shaped | Promise<Shaped>, errors: GraphQL.GraphQLError[], logger: Pick<Console, 'error'>, telemetry: TelemetryConfig): Promise<GatewayExecutionResult> {
  return tracer.startActiveSpan(OpenTelemetrySpanNames.POST_PROCESSING, async (span) => {
    let data;
    try {
      let postProcessingErrors;
      ({ data, errors: postProcessingErrors } = await shape());
      if (errors.length === 0 && postProcessingErrors.length > 0) {
        spanFailed(span, postProcessingErrors, telemetry);
        return { extensions: { valueCompletion: postProcessingErrors }, data: data as GatewayExecutionResult['data'] };
      }
    } catch (error) {
      spanFailed(span, [error as Error], telemetry);
      if (error instanceof GraphQLError) return { errors: [error] };
      if (error instanceof Error) return { errors: [new GraphQLError(error.message, { originalError: error })] };
      logger.error(`Unexpected error during query plan execution: ${String(error)}`);
      return { errors: [new GraphQLError('Unexpected error during query plan execution')] };
    } finally {
      span.end();
    }
    return errors.length === 0 ? { data: data as GatewayExecutionResult['data'] } : { errors, data: data as GatewayExecutionResult['data'] };
  });
}

async function executeNode(context: ExecutionContext, node: PlanNode, currentCursor: ResultCursor | undefined): Promise<void> {
  if (!currentCursor) return;
  switch (node.kind) {
    case 'Sequence':
      for (const child of node.nodes) await executeNode(context, child, currentCursor);
      return;
    case 'Parallel':
      await Promise.all(node.nodes.map((child) => executeNode(context, child, currentCursor)));
      return;
    case 'Flatten':
      await executeNode(context, node.node, moveIntoCursor(currentCursor, node.path));
      return;
    case 'Fetch':
      try {
        await executeFetch(context, node, currentCursor);
      } catch (error) {
        context.errors.push(error as GraphQL.GraphQLError);
      }
      return;
    case 'Condition': {
      const condition = evaluateCondition(node, context.operation.variableDefinitions, context.requestContext.request.variables);
      const branch = condition ? node.ifClause : node.elseClause;
      if (branch) await executeNode(context, branch, currentCursor);
      return;
    }
    case 'Defer':
      await executeDefer(context, node);
      return;
  }
}

/**
 * A Defer node (at the top of the plan, or of a deferred fragment nesting others): its primary selection
 * is the current part's; each deferred fragment becomes a part of its own, all of them started together once
 * the primary's fetches are done and the event loop has turned: the primary part is written before any
 * deferred work (a Risk Index map's CPU, in-process) can hold the loop, so it is never later than the same
 * query without the deferred fields.
 */
async function executeDefer(context: ExecutionContext, node: DeferNode) {
  context.part.subselection = node.primary.subselection;
  if (node.primary.node) await executeNode(context, node.primary.node, context.root);
  const turned = new Promise<void>((resolve) => { setImmediate(resolve); });
  context.part.children.push(...node.deferred.map((deferred) => startDeferred(context, deferred, turned)));
}

function startDeferred(context: ExecutionContext, deferred: DeferredNode, after: Promise<void>): DeferredPart {
  const part: PartState = { queryPath: deferred.queryPath, label: deferred.label, subselection: deferred.subselection, errors: [], children: [] };
  const child: ExecutionContext = { ...context, part, errors: part.errors };
  // Deferred nodes' Flatten paths are from the root of the answer.
  const executed = after.then(() => (deferred.node ? executeNode(child, deferred.node, context.root) : undefined)).then(() => part, (error: unknown) => {
    part.errors.push(error instanceof GraphQLError ? error : new GraphQLError(error instanceof Error ? error.message : String(error)));
    return part;
  });
  return { part, executed };
}

async function executeFetch(context: ExecutionContext, fetch: FetchNode, currentCursor: ResultCursor) {
  const service = context.serviceMap[fetch.serviceName];
  return inSpan(OpenTelemetrySpanNames.FETCH, { service: fetch.serviceName }, context.telemetry, async () => {
    if (!service) throw new Error(`Couldn't find service with name "${fetch.serviceName}"`);
    const entities = Array.isArray(currentCursor.data) ? currentCursor.data.filter(isNotNullOrUndefined) : [currentCursor.data];
    if (entities.length < 1) return;
    const variables = Object.create(null) as Record<string, unknown>;
    if (fetch.variableUsages) {
      const provided = context.requestContext.request.variables;
      for (const name of fetch.variableUsages) {
        if (provided && hasOwn(provided, name) && typeof provided[name] !== 'undefined') variables[name] = provided[name];
      }
    }
    if (!fetch.requires) {
      const received = await sendOperation(variables);
      if (received) applyRewrites(context.supergraphSchema, fetch.outputRewrites, received);
      for (const entity of entities) deepMerge(entity, received);
    } else {
      const representations: ResultMap[] = [];
      const representationToEntity: number[] = [];
      entities.forEach((entity, index) => {
        const representation = executeSelectionSet(context.supergraphSchema, entity, fetch.requires!);
        if (representation && representation[TypeNameMetaFieldDef.name]) {
          applyRewrites(context.supergraphSchema, fetch.inputRewrites, representation);
          representations.push(representation);
          representationToEntity.push(index);
        }
      });
      if (representations.length < 1) return;
      if ('representations' in variables) throw new Error(`Variables cannot contain key "representations"`);
      const received = await sendOperation({ ...variables, representations });
      if (!received) return;
      if (!(received._entities && Array.isArray(received._entities))) throw new Error(`Expected "data._entities" in response to be an array`);
      const receivedEntities = received._entities as (ResultMap | null)[];
      if (receivedEntities.length !== representations.length) throw new Error(`Expected "data._entities" to contain ${representations.length} elements`);
      for (let i = 0; i < entities.length; i++) {
        const receivedEntity = receivedEntities[i];
        const existingEntity = entities[representationToEntity[i]!]!;
        if (receivedEntity && !receivedEntity['__typename']) receivedEntity['__typename'] = existingEntity['__typename'];
        applyRewrites(context.supergraphSchema, fetch.outputRewrites, receivedEntity as ResultMap);
        deepMerge(entities[representationToEntity[i]!], receivedEntity);
      }
    }
  });

  async function sendOperation(variables: Record<string, unknown>): Promise<ResultMap | null | undefined> {
    const response = await service!.process({
      kind: GraphQLDataSourceRequestKind.INCOMING_OPERATION,
      request: { query: fetch.operation, variables, operationName: fetch.operationName },
      incomingRequestContext: context.requestContext,
      context: context.requestContext.context,
      document: fetch.operationDocumentNode,
      pathInIncomingRequest: currentCursor.path,
    });
    if (response.errors) {
      const errorPathHelper = makeLazyErrorPathGenerator(fetch, currentCursor);
      context.errors.push(...response.errors.map((error) => downstreamServiceError(error, fetch.serviceName, errorPathHelper)));
    }
    return response.data as ResultMap | null | undefined;
  }
}

function makeLazyErrorPathGenerator(fetch: FetchNode, cursor: ResultCursor) {
  let hydratedPaths: ResponsePath[] | undefined;
  return (errorPath: GraphQL.GraphQLFormattedError['path']) => {
    if (fetch.requires && typeof errorPath?.[1] === 'number') {
      if (!hydratedPaths) {
        hydratedPaths = [];
        generateHydratedPaths([], cursor.path, cursor.fullResult, hydratedPaths);
      }
      const hydratedPath = hydratedPaths[errorPath[1]] ?? [];
      return [...hydratedPath, ...errorPath.slice(2)];
    }
    return errorPath ? [...cursor.path, ...errorPath.slice()] : undefined;
  };
}

export function generateHydratedPaths(parent: ResponsePath, path: ResponsePath, data: unknown, result: ResponsePath[]) {
  const head = path[0];
  if (data == null) return;
  if (head == null) {
    result.push(parent.slice());
  } else if (head === '@') {
    assert(Array.isArray(data), 'expected array when encountering `@`');
    for (const [i, value] of data.entries()) {
      parent.push(i);
      generateHydratedPaths(parent, path.slice(1), value, result);
      parent.pop();
    }
  } else if (typeof head === 'string') {
    if (Array.isArray(data)) {
      for (const [i, value] of data.entries()) {
        parent.push(i);
        generateHydratedPaths(parent, path, value, result);
        parent.pop();
      }
    } else if (hasOwn(data as object, head)) {
      parent.push(head);
      generateHydratedPaths(parent, path.slice(1), (data as ResultMap)[head], result);
      parent.pop();
    }
  } else {
    assert(false, `unknown path part "${head}"`);
  }
}

function executeSelectionSet(schema: GraphQLSchema, source: ResultMap | null, selections: QueryPlanSelectionNode[]): ResultMap | null {
  if (source === null) return null;
  const result = Object.create(null) as ResultMap;
  for (const selection of selections) {
    switch (selection.kind) {
      case Kind.FIELD: {
        const responseName = getResponseName(selection);
        const subselections = selection.selections;
        if (!hasOwn(source, responseName) || typeof source[responseName] === 'undefined') return null;
        const value = source[responseName];
        if (Array.isArray(value)) {
          result[responseName] = value.map((item: ResultMap | null) => (subselections ? executeSelectionSet(schema, item, subselections) : item));
        } else if (subselections) {
          result[responseName] = executeSelectionSet(schema, value as ResultMap | null, subselections);
        } else {
          result[responseName] = value;
        }
        break;
      }
      case Kind.INLINE_FRAGMENT:
        if (!selection.typeCondition || !source) continue;
        if (isObjectOfType(schema, source, selection.typeCondition)) deepMerge(result, executeSelectionSet(schema, source, selection.selections));
        break;
    }
  }
  return result;
}

function moveIntoCursor(cursor: ResultCursor, pathInCursor: ResponsePath): ResultCursor | undefined {
  const data = flattenResultsAtPath(cursor.data, pathInCursor);
  return data ? { path: cursor.path.concat(pathInCursor), data: data as ResultMap | ResultMap[], fullResult: cursor.fullResult } : undefined;
}

function flattenResultsAtPath(value: unknown, path: ResponsePath): unknown {
  if (path.length === 0) return value;
  if (value === undefined || value === null) return value;
  const [current, ...rest] = path;
  if (current === '@') return (value as unknown[]).flatMap((element) => flattenResultsAtPath(element, rest));
  assert(typeof current === 'string', () => `Unexpected ${typeof current} found in path`);
  assert(!Array.isArray(value), () => `Unexpected array in result for path element ${current}`);
  return flattenResultsAtPath(getOwn(value as ResultMap, current), rest);
}

function downstreamServiceError(originalError: GraphQL.GraphQLFormattedError, serviceName: string, generateErrorPath: ReturnType<typeof makeLazyErrorPathGenerator>) {
  let { message } = originalError;
  const { extensions } = originalError;
  if (!message) message = `Error while fetching subquery from service "${serviceName}"`;
  const errorOptions = {
    originalError: originalError as Error,
    path: generateErrorPath(originalError.path),
    extensions: { ...extensions, serviceName },
  };
  const codeDef = errorCodeDef(originalError as GraphQL.GraphQLError);
  if (!codeDef && extensions?.code) return new GraphQLError(message, errorOptions);
  return (codeDef ?? ERRORS.DOWNSTREAM_SERVICE_ERROR).err(message, errorOptions);
}
