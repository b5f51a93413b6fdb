import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/JSON export carries it, with its resource's service name and attributes flattened. */
export interface ReceivedSpan {
  service: string;
  scope: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

interface OtlpValue { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number }
interface OtlpAttribute { key: string; value: OtlpValue }
interface OtlpExport {
  resourceSpans?: {
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: { scope?: { name?: string }; spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpAttribute[] }[] }[];
  }[];
}

const valueOf = (v: OtlpValue) => v.stringValue ?? v.boolValue ?? v.doubleValue ?? Number(v.intValue);
const flatten = (attributes: OtlpAttribute[] = []) => Object.fromEntries(attributes.map((a) => [a.key, valueOf(a.value)]));

/**
 * A local OTLP/HTTP receiver (the collector's `/v1/traces`) for exporters set to
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json: keeps every span it is sent.
 */
export async function otlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        for (const resource of (JSON.parse(body) as OtlpExport).resourceSpans ?? []) {
          const service = String(flatten(resource.resource?.attributes)['service.name']);
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({ service, scope: scope.scope?.name ?? '', traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '',
                name: span.name, kind: span.kind, attributes: flatten(span.attributes) });
            }
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    /** The spans of one trace, once `done` holds for them (polled; the exporter sends in batches). */
    async trace(traceId: string, done: (spans: ReceivedSpan[]) => boolean, timeoutMs = 20_000) {
      const started = Date.now();
      let mine = spans.filter((s) => s.traceId === traceId);
      while (!done(mine) && Date.now() - started < timeoutMs) {
        await new Promise((r) => setTimeout(r, 100));
        mine = spans.filter((s) => s.traceId === traceId);
      }
      return mine;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
