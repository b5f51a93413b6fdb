import { createRequire } from 'node:module';
import type * as GraphQL from 'graphql';
import type {
  GraphQLError, DocumentNode, FieldNode, FormattedExecutionResult, FragmentDefinitionNode, GraphQLSchema,
  OperationDefinitionNode, ValidationRule,
} from 'graphql';
import { Supergraph } from '@apollo/federation-internals';
import type { CostDirectives } from '../../subgraphs/platform/cost/directives.ts';
import { operationCost } from '../../subgraphs/platform/cost/estimate.ts';
import type { AppError } from '../../subgraphs/platform/errors.ts';
import { checkIdText } from '../../subgraphs/platform/ids.ts';
import { LIVE_FIELDS } from '../../subgraphs/events.ts';
import { resourceKeyOf, type LiveField } from '../../subgraphs/platform/webhooks/events.ts';
import type { Caller } from '../../subgraphs/platform/auth/tokens.ts';
import { documentRequest, withDocument } from '../trusted/http.ts';
import { DocumentRefused, type TrustedDocuments } from '../trusted/registry.ts';

// The CommonJS graphql, as in subgraphs/platform/cost/estimate.ts: the API schema below is built with
// it (federation-internals), so documents are parsed, validated and costed with it too, and graphql-ws
// recognises errors by that module's GraphQLError class (a bundler, vitest's included, may resolve
// `import 'graphql'` to the other build).
const cjs = createRequire(import.meta.url)('graphql') as typeof GraphQL;

/** What a subscription document is checked against: the API schema and the gateway's own limits. */
export interface SubscriptionRules {
  schema: GraphQLSchema;
  validationRules: readonly ValidationRule[];
  parseOptions: { maxTokens: number };
  directives: CostDirectives;
  maxCost: number;
}

export const apiSchemaOf = (supergraphSdl: string): GraphQLSchema => Supergraph.build(supergraphSdl).apiSchema().toGraphQLJSSchema() as unknown as GraphQLSchema;

/** A subscription accepted: what it watches and the query run on each event. */
export interface PreparedSubscription {
  fieldName: string;
  field: LiveField;
  /** The outbox resource key its events carry, e.g. `rescue:<reqId>`. */
  resourceKey: string;
  /** Where the entity is in each result: the field's alias or name. */
  responseKey: string;
  /** Where the entity is in the query's result: the field's alias or the query field's name. */
  queryKey: string;
  /** The subscription document as sent (transports need it to tell its operation type). */
  document: DocumentNode;
  /** The subscription turned into a query of the same entity, with the same selection set (and no alias added). */
  query: string;
  operationName?: string;
  variables: Record<string, unknown>;
  /** The event to resume after (the field's `after` argument, or SSE's Last-Event-ID): replay.ts. */
  after?: string;
}

/** The argument of every Subscription field that names the last event a client received. */
export const AFTER_ARGUMENT = 'after';

/** A document refused before it starts; `status` is the HTTP status an SSE request answers with. */
export class SubscriptionRefused extends Error {
  readonly errors: GraphQLError[];
  readonly status: number;
  constructor(errors: GraphQLError[], status = 400) {
    super(errors[0]?.message ?? 'subscription refused');
    this.errors = errors;
    this.status = status;
  }
}

const refuse = (code: string, messages: readonly string[], extensions: Record<string, unknown> = {}) =>
  new SubscriptionRefused(messages.map((message) => new cjs.GraphQLError(message, { extensions: { code, ...extensions } })));

export interface SubscriptionRequest { query?: unknown; variables?: unknown; operationName?: unknown }

/**
 * The subscription request with the text of the registered document it names, as POST /graphql
 * resolves it (gateway/trusted): refused when the caller's mode or its ids do not let it run.
 */
export async function trustedSubscription(trusted: TrustedDocuments, caller: Caller, request: SubscriptionRequest): Promise<SubscriptionRequest> {
  const params = request as Record<string, unknown>;
  try {
    const text = await trusted.resolve(caller, documentRequest(params));
    return text === undefined ? request : withDocument(params, text);
  } catch (error) {
    if (!(error instanceof DocumentRefused)) throw error;
    // A stream cannot answer 200 with an error, as Apollo Server does for an unknown APQ hash.
    const status = error.status === 200 ? 404 : error.status;
    throw new SubscriptionRefused([new cjs.GraphQLError(error.message, { extensions: error.extensions })], status);
  }
}

/**
 * Checks a subscription document as POST /graphql checks a query (parse with the token limit,
 * validation with the depth/alias/introspection rules, the cost estimate against GRAPHQL_MAX_COST) and
 * turns it into the query run on each event: `subscription { rescueUpdated(reqId: $id) { ... } }`
 * becomes `query { rescue(reqId: $id) { ... } }` (as many aliases and no more tokens: a document within
 * the limits stays within them on every event), whose results `asSubscriptionResult` puts in the
 * subscription's shape. The watched key is a caller-chosen id: over 255 characters it is refused
 * (BAD_USER_INPUT naming the argument), as ids are everywhere.
 */
export function prepareSubscription(rules: SubscriptionRules, request: SubscriptionRequest): PreparedSubscription {
  if (typeof request.query !== 'string') throw refuse('BAD_REQUEST', ['A subscription needs a GraphQL document in `query`']);
  const variables = (request.variables ?? {}) as Record<string, unknown>;
  if (typeof variables !== 'object' || Array.isArray(variables)) throw refuse('BAD_REQUEST', ['`variables` must be an object']);
  const operationName = typeof request.operationName === 'string' ? request.operationName : undefined;
  let document: DocumentNode;
  try {
    document = cjs.parse(request.query, rules.parseOptions);
  } catch (error) {
    throw refuse('GRAPHQL_PARSE_FAILED', [(error as Error).message]);
  }
  const invalid = cjs.validate(rules.schema, document, [...cjs.specifiedRules, ...rules.validationRules]);
  if (invalid.length) throw refuse('GRAPHQL_VALIDATION_FAILED', invalid.map((e) => e.message));
  const operation = cjs.getOperationAST(document, operationName);
  if (!operation) throw refuse('OPERATION_RESOLUTION_FAILURE', [operationName ? `Unknown operation named "${operationName}"` : 'Must provide operation name if query contains multiple operations']);
  if (operation.operation !== 'subscription') {
    throw refuse('BAD_REQUEST', [`This transport carries subscriptions only: send a ${operation.operation} with POST /graphql`]);
  }
  const root = operation.selectionSet.selections[0];
  if (operation.selectionSet.selections.length !== 1 || root?.kind !== cjs.Kind.FIELD) throw refuse('BAD_REQUEST', ['Select one Subscription field directly, not through a fragment']);
  const field = LIVE_FIELDS[root.name.value];
  const definition = rules.schema.getSubscriptionType()?.getFields()[root.name.value];
  if (!field || !definition) throw refuse('BAD_REQUEST', [`${root.name.value} is not a subscription this gateway runs`]);

  const coerced = cjs.getVariableValues(rules.schema, operation.variableDefinitions ?? [], variables);
  if (coerced.errors) throw refuse('BAD_USER_INPUT', coerced.errors.map((e) => e.message));
  const fragments = Object.fromEntries(document.definitions
    .filter((d): d is FragmentDefinitionNode => d.kind === cjs.Kind.FRAGMENT_DEFINITION).map((d) => [d.name.value, d]));
  const cost = operationCost({ schema: rules.schema, operation, fragments, variables: coerced.coerced, directives: rules.directives });
  if (cost > rules.maxCost) {
    throw refuse('COST_LIMIT_EXCEEDED', [`Estimated cost ${cost} is over the limit of ${rules.maxCost} (paid on every event): select fewer fields, nested lists or aliases`], { cost, maxCost: rules.maxCost });
  }
  const args = cjs.getArgumentValues(definition, root, coerced.coerced);
  const id = String(args[field.argument]);
  const after = args[AFTER_ARGUMENT] == null ? undefined : String(args[AFTER_ARGUMENT]);
  try {
    checkIdText(id, field.argument);
    if (after !== undefined) checkIdText(after, AFTER_ARGUMENT);
  } catch (error) {
    throw refuse('BAD_USER_INPUT', [(error as AppError).message], (error as AppError).extensions);
  }
  return {
    fieldName: root.name.value, field, resourceKey: resourceKeyOf(field, id), document,
    responseKey: root.alias?.value ?? root.name.value, queryKey: root.alias?.value ?? field.query,
    query: cjs.print(asQuery(document, operation, root, field)), operationName, variables, after,
  };
}

/** A per-event query's result in the subscription's shape: the entity (and its errors' paths) under the subscription's key. */
export function asSubscriptionResult(prepared: PreparedSubscription, result: FormattedExecutionResult): FormattedExecutionResult {
  const { queryKey, responseKey } = prepared;
  if (queryKey === responseKey) return result;
  const errors = result.errors?.map((e) => (e.path?.[0] === queryKey ? { ...e, path: [responseKey, ...e.path.slice(1)] } : e));
  return { ...result, ...(result.data ? { data: { [responseKey]: result.data[queryKey] } } : {}), ...(errors ? { errors } : {}) };
}

/**
 * The subscription as its query: the root field renamed, without `after` (the query field has no such
 * argument), and without the variables only `after` used (a variable defined and unused is invalid).
 */
function asQuery(document: DocumentNode, operation: OperationDefinitionNode, root: FieldNode, field: LiveField) {
  const queryRoot: FieldNode = {
    ...root, name: { kind: cjs.Kind.NAME, value: field.query },
    arguments: root.arguments?.filter((a) => a.name.value !== AFTER_ARGUMENT),
  };
  const selectionSet = { ...operation.selectionSet, selections: [queryRoot] };
  const used = new Set<string>();
  const fragments = document.definitions.filter((d) => d.kind === cjs.Kind.FRAGMENT_DEFINITION);
  // The uses, not the definitions: the operation is visited without its variable definitions.
  const uses = [{ ...operation, variableDefinitions: [], selectionSet }, ...fragments];
  const onVariable = (node: GraphQL.VariableNode) => { used.add(node.name.value); };
  cjs.visit({ kind: cjs.Kind.DOCUMENT, definitions: uses }, { Variable: onVariable });
  const variableDefinitions = operation.variableDefinitions?.filter((d) => used.has(d.variable.name.value));
  const query: OperationDefinitionNode = {
    ...operation, operation: cjs.OperationTypeNode.QUERY, variableDefinitions, selectionSet,
  };
  // Only the chosen operation: a document may hold others, which the query must not carry.
  return { ...document, definitions: document.definitions.flatMap((d): DocumentNode['definitions'][number][] => (d === operation ? [query] : d.kind === cjs.Kind.OPERATION_DEFINITION ? [] : [d])) };
}
