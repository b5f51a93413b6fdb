/*
 * FORK of @apollo/gateway 2.14.4, dist/index.js: ApolloGateway's `executor` and `updateWithSchemaAndNotify`
 * (see fork.ts). What changed:
 * - the executor runs the forked execute.ts, streaming deferred fragments when the request's Accept asks
 *   for multipart/mixed; deferSpec=20220824 and the context has a slot for them (withDeliverySlot);
 * - the API schema given to Apollo Server and used to build operation contexts includes @defer (not @stream);
 * - `plan(query)` fills the plan cache ahead of a query's first request (a subscription's, as it starts);
 * - concurrent first requests of one document wait for the one plan being built, not build one each;
 * - a data source that validates fetch documents (InProcessDataSource) gets each new plan's as it is built;
 * - dropped: `experimental_didResolveQueryPlan` and the `Apollo-Query-Plan-Experimental` header (unused here),
 *   and Apollo usage-reporting traces (see execute.ts).
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { operationFromDocument, type Schema, type Supergraph } from '@apollo/federation-internals';
import { ApolloGateway, type GatewayConfig } from '@apollo/gateway';
import type * as OperationContextModule from '@apollo/gateway/dist/operationContext.js';
import type * as AddExtensions from '@apollo/gateway/dist/schema-helper/addExtensions.js';
import type * as OpenTelemetry from '@apollo/gateway/dist/utilities/opentelemetry.js';
import { QueryPlanner, type FetchNode, type PlanNode, type QueryPlan, type SubscriptionNode } from '@apollo/query-planner';
import type { GatewayExecutionResult, GatewayGraphQLRequestContext } from '@apollo/server-gateway-interface';
import type * as GraphQL from 'graphql';
import type { DocumentNode, GraphQLError, GraphQLSchema } from 'graphql';
import { acceptsIncremental } from '../http/multipart.ts';
import type { IncrementalDelivery } from './deferred.ts';
import { executeQueryPlan, type ServiceMap } from './execute.ts';
import { inSpan, spanFailed } from './spans.ts';

const require = createRequire(import.meta.url);
const { parse } = require('graphql') as typeof GraphQL;
const { buildOperationContext } = require('@apollo/gateway/dist/operationContext.js') as typeof OperationContextModule;
const { addExtensions } = require('@apollo/gateway/dist/schema-helper/addExtensions.js') as typeof AddExtensions;
const { OpenTelemetrySpanNames, OpenTelemetryAttributeNames, requestContextSpanAttributes, operationContextSpanAttributes } =
  require('@apollo/gateway/dist/utilities/opentelemetry.js') as typeof OpenTelemetry;

/** The private fields of ApolloGateway 2.14.4 that the forked methods use. */
interface GatewayInternals {
  config: GatewayConfig & { telemetry?: OpenTelemetry.OpenTelemetryConfig };
  logger: { error(message: string): void; warn(message: string): void };
  schema?: GraphQLSchema;
  apiSchema?: Schema;
  supergraphSchema?: GraphQLSchema;
  serviceMap: Record<string, { dataSource: ServiceMap[string] }>;
  queryPlanStore: { get(key: string): Promise<QueryPlan | undefined>; set(key: string, plan: QueryPlan): Promise<void>; clear(): void };
  queryPlanner?: QueryPlanner;
  recursiveSelectionsLimitDisabled: boolean;
  nonLocalSelectionsLimitDisabled: boolean;
  onSchemaChangeListeners: Set<(schema: GraphQLSchema) => void>;
  onSchemaLoadOrUpdateListeners: Set<(update: { apiSchema: GraphQLSchema; coreSupergraphSdl: string }) => void>;
  validateIncomingRequest(requestContext: GatewayGraphQLRequestContext, operationContext: OperationContextModule.OperationContext): GraphQLError[];
  updateWithSchemaAndNotify(supergraph: Supergraph, supergraphSdl: string, legacyDontNotifyOnSchemaChangeListeners?: boolean): void;
}

const SLOT = Symbol('incremental delivery');

/** Where the executor leaves the deferred parts of a request's incremental answer. */
export interface DeliverySlot { delivery?: IncrementalDelivery }

type WithSlot = { [SLOT]?: DeliverySlot };

/**
 * The request's context with a slot for the deferred parts of its answer, read once Apollo Server has answered:
 * without one (a REST row's operation, a subscription's event), deferred fragments are merged into one answer.
 * A symbol property, so that Apollo Server's shallow copy of the context still holds the same slot.
 */
export function withDeliverySlot<T extends object>(context: T): { context: T; slot: DeliverySlot } {
  const slot: DeliverySlot = {};
  return { context: Object.assign(context, { [SLOT]: slot }), slot };
}

const slotOf = (context: unknown): DeliverySlot | undefined =>
  (typeof context === 'object' && context !== null ? (context as WithSlot)[SLOT] : undefined);

/**
 * Runs `end` once the operation of this context is over: at once, or when the last deferred fetch of its
 * incremental answer has settled (with their errors), so that bounds and metrics see one operation.
 */
export function afterLastPart(context: unknown, end: (deferredErrors: readonly GraphQLError[]) => void) {
  const delivery = slotOf(context)?.delivery;
  if (!delivery) return end([]);
  void delivery.finished.then(end, () => end([]));
}

/** The gateway's configuration, and GRAPHQL_MAX_RESPONSE_OBJECTS, counted over all the parts of an incremental answer. */
export type IncrementalGatewayConfig = GatewayConfig & { maxResponseObjects: number };

/** ApolloGateway executing deferred plans (queryPlannerConfig.incrementalDelivery.enableDefer) itself. */
export class IncrementalGateway extends ApolloGateway {
  constructor({ maxResponseObjects, ...config }: IncrementalGatewayConfig) {
    const queryPlannerConfig = { ...(config as { queryPlannerConfig?: object }).queryPlannerConfig, incrementalDelivery: { enableDefer: true } };
    super({ ...config, queryPlannerConfig } as GatewayConfig);
    const internals = this as unknown as GatewayInternals;
    internals.updateWithSchemaAndNotify = (supergraph, sdl, legacy) => updateWithSchemaAndNotify(internals, supergraph, sdl, legacy);
    this.executor = (requestContext) => execute(internals, requestContext, maxResponseObjects);
  }

  /**
   * Plans `query` into the plan cache as its first execution would, under the key Apollo Server's
   * requests look it up by: a subscription's query is planned when it starts, not on its first event.
   * `document`: the query already parsed, if it is.
   */
  async plan(query: string, operationName?: string, document?: DocumentNode): Promise<void> {
    const queryHash = createHash('sha256').update(query).digest('hex');
    const source = { request: { operationName }, queryHash, operationName: operationName ?? null };
    await planOf(this as unknown as GatewayInternals, source, () => document ?? parse(query));
  }
}

function updateWithSchemaAndNotify(gateway: GatewayInternals, supergraph: Supergraph, supergraphSdl: string, legacyDontNotifyOnSchemaChangeListeners = false) {
  gateway.queryPlanStore.clear();
  gateway.apiSchema = supergraph.apiSchema();
  gateway.schema = addExtensions(gateway.apiSchema.toGraphQLJSSchema({ includeDefer: true }));
  gateway.queryPlanner = new QueryPlanner(supergraph, gateway.config.queryPlannerConfig);
  const schema = gateway.schema;
  const notify = <A>(listeners: Set<(argument: A) => void>, argument: A, hook: string) => {
    for (const listener of listeners) {
      try {
        listener(argument);
      } catch (e) {
        gateway.logger.error(`An error was thrown from an '${hook}' listener. The schema will still update: ${(e as Error)?.message ?? String(e)}`);
      }
    }
  };
  if (!legacyDontNotifyOnSchemaChangeListeners) notify(gateway.onSchemaChangeListeners, schema, 'onSchemaChange');
  notify(gateway.onSchemaLoadOrUpdateListeners, { apiSchema: schema, coreSupergraphSdl: supergraphSdl }, 'onSchemaLoadOrUpdate');
}

/** What a plan is cached by: a request's (Apollo Server's request context), or a subscription's query. */
type PlanSource = Pick<GatewayGraphQLRequestContext, 'queryHash' | 'operationName'> & { request: { operationName?: string } };

/** Plans being built, by gateway and cache key. */
const building = new WeakMap<GatewayInternals, Map<string, Promise<QueryPlan>>>();

/**
 * The cached plan, else one built from `documentOf()` (parsed only then) and cached. Concurrent first
 * requests of one document (a burst of subscribers of a new one) wait for the one plan being built.
 */
async function planOf(gateway: GatewayInternals, source: PlanSource, documentOf: () => DocumentNode): Promise<QueryPlan> {
  const { request, queryHash } = source;
  const key = request.operationName ? createHash('sha256').update(queryHash).update(request.operationName).digest('hex') : queryHash;
  const stored = await gateway.queryPlanStore.get(key);
  if (stored) return stored;
  let inFlight = building.get(gateway);
  if (!inFlight) building.set(gateway, inFlight = new Map());
  let plan = inFlight.get(key);
  if (!plan) {
    plan = buildPlan(gateway, source, documentOf, key).finally(() => inFlight.delete(key));
    inFlight.set(key, plan);
  }
  return plan;
}

/** A data source that validates a fetch's document ahead of its first execution. */
interface Preparing { prepare(document: DocumentNode): void }

function* fetchesOf(node: PlanNode | SubscriptionNode | undefined): Generator<FetchNode> {
  switch (node?.kind) {
    case 'Fetch': yield node; break;
    case 'Sequence': case 'Parallel': for (const child of node.nodes) yield* fetchesOf(child); break;
    case 'Flatten': yield* fetchesOf(node.node); break;
    case 'Subscription': yield* fetchesOf(node.primary); yield* fetchesOf(node.rest); break;
    case 'Condition': yield* fetchesOf(node.ifClause); yield* fetchesOf(node.elseClause); break;
    case 'Defer':
      yield* fetchesOf(node.primary.node);
      for (const deferred of node.deferred) yield* fetchesOf(deferred.node);
      break;
    default:
  }
}

async function buildPlan(gateway: GatewayInternals, { request, operationName }: PlanSource, documentOf: () => DocumentNode, key: string): Promise<QueryPlan> {
  const attributes = operationName ? { [OpenTelemetryAttributeNames.GRAPHQL_OPERATION_NAME]: operationName } : {};
  const plan = await inSpan(OpenTelemetrySpanNames.PLAN, attributes, gateway.config.telemetry, () => {
    const operation = operationFromDocument(gateway.apiSchema!, documentOf(), { operationName: request.operationName });
    return gateway.queryPlanner!.buildQueryPlan(operation, {
      recursiveSelectionsLimitDisabled: gateway.recursiveSelectionsLimitDisabled,
      nonLocalSelectionsLimitDisabled: gateway.nonLocalSelectionsLimitDisabled,
    });
  });
  for (const fetch of fetchesOf(plan.node)) {
    const source = gateway.serviceMap[fetch.serviceName]?.dataSource;
    if (fetch.operationDocumentNode && source && 'prepare' in source) (source as Preparing).prepare(fetch.operationDocumentNode);
  }
  try {
    await gateway.queryPlanStore.set(key, plan);
  } catch (err) {
    gateway.logger.warn(`Could not store queryPlan${(err as Error)?.message ?? String(err)}`);
  }
  return plan;
}

async function execute(gateway: GatewayInternals, requestContext: GatewayGraphQLRequestContext, maxResponseObjects: number): Promise<GatewayExecutionResult> {
  const telemetry = gateway.config.telemetry;
  return inSpan(OpenTelemetrySpanNames.REQUEST, requestContextSpanAttributes(requestContext, telemetry), telemetry, async (span) => {
    const { request, document } = requestContext;
    const operationContext = buildOperationContext({ schema: gateway.schema!, operationDocument: document, operationName: request.operationName });
    span.setAttributes(operationContextSpanAttributes(operationContext));
    const validationErrors = gateway.validateIncomingRequest(requestContext, operationContext);
    if (validationErrors.length > 0) {
      spanFailed(span, validationErrors, telemetry);
      return { errors: validationErrors };
    }
    const queryPlan = await planOf(gateway, requestContext, () => document);
    const serviceMap: ServiceMap = Object.fromEntries(Object.entries(gateway.serviceMap).map(([name, { dataSource }]) => [name, dataSource]));
    const slot = slotOf(requestContext.context);
    const { result, delivery } = await executeQueryPlan(queryPlan, serviceMap, requestContext, operationContext, gateway.supergraphSchema!, gateway.apiSchema!, {
      incremental: slot !== undefined && acceptsIncremental(request.http?.headers.get('accept')), maxResponseObjects, telemetry,
    });
    if (slot) slot.delivery = delivery;
    if (result.errors) spanFailed(span, result.errors, telemetry);
    return result;
  });
}
