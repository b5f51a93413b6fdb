/**
 * W3C Trace Context (the header OpenTelemetry propagates): the gateway continues the caller's trace
 * or starts one, and forwards `traceparent` to every subgraph it calls for the request. The gateway's
 * hop gets its own span id, so a subgraph sees the caller's trace id with the gateway as parent.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

export const TRACEPARENT_HEADER = 'traceparent';
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

export interface TraceContext { traceId: string; spanId: string; flags: string }

/** The trace context of a valid `traceparent` header value, else null (version ff and all-zero ids are invalid). */
export function parseTraceparent(header: unknown): TraceContext | null {
  if (typeof header !== 'string') return null;
  const m = TRACEPARENT.exec(header.trim().toLowerCase());
  if (!m || m[1] === 'ff' || (m[1] === '00' && m[5] !== undefined) || m[2] === ZERO_TRACE || m[3] === ZERO_SPAN) return null;
  return { traceId: m[2], spanId: m[3], flags: m[4] };
}

export const formatTraceparent = (t: TraceContext) => `00-${t.traceId}-${t.spanId}-${t.flags}`;

const newSpanId = () => {
  let id = ZERO_SPAN;
  while (id === ZERO_SPAN) id = randomBytes(8).toString('hex');
  return id;
};

/** The context of the gateway's hop: the caller's trace id (or a new one) and a new span id. */
export function continueTrace(header: unknown): TraceContext {
  const incoming = parseTraceparent(header);
  let traceId = incoming?.traceId ?? ZERO_TRACE;
  while (traceId === ZERO_TRACE) traceId = randomBytes(16).toString('hex');
  return { traceId, spanId: newSpanId(), flags: incoming?.flags ?? '01' };
}

const byRequest = new WeakMap<FastifyRequest, TraceContext>();

/** The request's trace context, made once per request (GraphQL and the REST paths share it). */
export function traceOf(request: FastifyRequest): TraceContext {
  let trace = byRequest.get(request);
  if (!trace) {
    trace = continueTrace(request.headers[TRACEPARENT_HEADER]);
    byRequest.set(request, trace);
  }
  return trace;
}

/** The `traceparent` value to send to subgraphs for this request. */
export const traceparentFor = (request: FastifyRequest) => formatTraceparent(traceOf(request));
