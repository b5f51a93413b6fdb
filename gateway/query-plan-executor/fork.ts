/**
 * gateway/query-plan-executor/ is a maintained fork of parts of @apollo/gateway, made so that the gateway
 * executes `Defer` plan nodes (Apollo declined @defer in the gateway: apollographql/federation#1204):
 * - execute.ts: dist/executeQueryPlan.js (the query-plan executor), with Defer nodes and incremental parts;
 * - shaping.ts: dist/resultShaping.js, shaping a selection set at any path (a deferred fragment's);
 * - gateway.ts: ApolloGateway's `executor` and `updateWithSchemaAndNotify` (dist/index.js), which call the
 *   forked executor and build the API schema with @defer;
 * - deferred.ts (ours): the parts of an incremental answer.
 * It reaches into ApolloGateway's private fields and dist/ modules, so it holds for this version only:
 * test/gateway/query-plan-executor-fork.test.ts fails when the installed @apollo/gateway is another one.
 * On an upgrade, diff the new dist/executeQueryPlan.js, dist/resultShaping.js and the executor in
 * dist/index.js against FORKED_FROM's, carry the changes over, then bump FORKED_FROM.
 */
export const FORKED_FROM = { package: '@apollo/gateway', version: '2.14.4' } as const;
