/**
 * The OpenTelemetry Node SDK, configured by the standard OTEL_* variables (exporter, endpoint,
 * protocol, sampler, resource): one trace per request across the gateway (HTTP, Fastify, Apollo
 * Gateway's own plan and fetch spans), the subgraphs (GraphQL execution; over HTTP the W3C
 * `traceparent` is injected and extracted by the HTTP instrumentation) and the database (`pg`;
 * PGlite gets its SQL spans from pglite.ts). Loaded by preload.ts only when enabled.
 */
import { FastifyOtelInstrumentation } from '@fastify/otel';
import { clientAppAttributes } from '../client-app.ts';
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { register } from 'import-in-the-middle/register-hooks.mjs';
import { onTracingShutdown } from './switch.ts';

// `pg` is imported from ES modules (MikroORM, ../db/orm.ts), which the CommonJS require hook never
// sees: an in-thread ESM loader hook lets the pg instrumentation patch it. Only these modules go
// through it; http, Fastify and graphql are reached through require() or diagnostics channels.
register({ include: ['pg', 'pg-pool'] });

/** `gateway` or `subgraph-<name>`, as the logs name the process, unless OTEL_SERVICE_NAME says otherwise. */
function defaultServiceName(argv: string[]) {
  const script = argv[1] ?? '';
  if (!script.endsWith('subgraphs/serve.ts')) return 'gateway';
  return `subgraph-${argv[2] ?? process.env.SUBGRAPH ?? 'unknown'}`;
}

/** Probes and scrapes are not requests worth a trace. */
const PROBES = /^\/(healthz|readyz|metrics)(\?|$)/;

const sdk = new NodeSDK({
  serviceName: process.env.OTEL_SERVICE_NAME?.trim() || defaultServiceName(process.argv),
  instrumentations: [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (request) => PROBES.test(request.url ?? ''),
    }),
    // One span per request (with its route) and one for its handler, none per lifecycle hook.
    new FastifyOtelInstrumentation({
      registerOnInitialization: true, instrumentHooks: false, ignorePaths: (route) => PROBES.test(route.url),
      requestHook: (span, request) => { span.setAttributes(clientAppAttributes(request.headers)); },
    }),
    // Parse, validate and execute per operation; a span per resolver would outnumber everything else.
    new GraphQLInstrumentation({ ignoreResolveSpans: true }),
    // Statements outside a request (migrations, the webhook worker's polling) would each be a trace of their own.
    new PgInstrumentation({ requireParentSpan: true }),
  ],
});
sdk.start();
onTracingShutdown(() => sdk.shutdown());
