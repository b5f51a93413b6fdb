/**
 * The OpenTelemetry spans of the forked executor (execute.ts, gateway.ts), recorded as @apollo/gateway
 * 2.14.4 records them: errors as exceptions on the span (as far as `telemetry` allows) and status ERROR.
 */
import { createRequire } from 'node:module';
import type * as OpenTelemetry from '@apollo/gateway/dist/utilities/opentelemetry.js';
import { SpanStatusCode } from '@opentelemetry/api';

const require = createRequire(import.meta.url);
const { tracer, recordExceptions } =
  require('@apollo/gateway/dist/utilities/opentelemetry.js') as typeof OpenTelemetry;

export type TelemetryConfig = OpenTelemetry.OpenTelemetryConfig | undefined;
// The span and attributes of the @opentelemetry/api @apollo/gateway itself depends on.
type Span = Parameters<typeof recordExceptions>[0];
type Attributes = ReturnType<typeof OpenTelemetry.requestContextSpanAttributes>;

type Exceptions = Parameters<typeof recordExceptions>[1];

/** Marks `span` failed with `errors` (GraphQL errors of a result, or what a step threw). */
export function spanFailed(span: Span, errors: Exceptions, telemetry: TelemetryConfig) {
  recordExceptions(span, errors, telemetry);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** Runs `work` in a new active span: what it throws fails the span and is thrown again; the span ends. */
export function inSpan<T>(
  name: string, attributes: Attributes, telemetry: TelemetryConfig, work: (span: Span) => T | Promise<T>,
): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span: Span): Promise<T> => {
    try {
      return await work(span);
    } catch (err) {
      spanFailed(span, [err as Error], telemetry);
      throw err;
    } finally {
      span.end();
    }
  });
}
