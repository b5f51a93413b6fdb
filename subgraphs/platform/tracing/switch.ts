/**
 * Whether this process records traces, decided from the standard OpenTelemetry variables alone, so
 * the preload can decide before anything else is imported: on when an OTLP endpoint is set or
 * OTEL_TRACES_EXPORTER names an exporter; off otherwise, with OTEL_TRACES_EXPORTER=none or
 * OTEL_SDK_DISABLED=true. Off, no OpenTelemetry module is ever loaded.
 */
export function tracingEnabled(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim()).filter(Boolean);
  if (exporters.length) return exporters.some((name) => name !== 'none');
  return !!(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

let shutdown: (() => Promise<void>) | undefined;

/** Set by the SDK once started: how to export the spans it still holds. */
export const onTracingShutdown = (flush: () => Promise<void>) => { shutdown = flush; };

/** Exports the spans still buffered, before the process exits; nothing when tracing is off. */
export const flushTracing = async () => { await shutdown?.().catch(() => undefined); };
