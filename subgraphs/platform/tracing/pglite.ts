/**
 * SQL spans for PGlite, which runs on a thread of this process (../db/pglite-thread.ts) and has
 * no `pg` driver for the pg instrumentation to patch: every statement of the shared cluster (and of
 * its transactions) becomes a client span with the attributes the pg instrumentation sets, so
 * traces read the same on both databases. Loaded only when tracing is on (../db/orm.ts).
 */
import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { PgliteThread, Statements } from '../db/pglite-thread.ts';

const tracer = trace.getTracer('fleet-risk-graph/pglite');
const DATABASE = 'postgres';

/** The statement's first keyword, upper-cased (SELECT, INSERT, BEGIN ...), as pg's span names carry it. */
const operationOf = (sql: string) => /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';

function spanned<T>(sql: string, run: () => Promise<T>): Promise<T> {
  // As the pg instrumentation is set up (requireParentSpan): statements outside a request (migrations, pollers) are not traced.
  if (!trace.getActiveSpan()) return run();
  const attributes = { 'db.system.name': 'postgresql', 'db.namespace': DATABASE, 'db.query.text': sql };
  return tracer.startActiveSpan(`pglite.query:${operationOf(sql)} ${DATABASE}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await run();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      throw error;
    } finally {
      span.end();
    }
  });
}

function traceStatements(target: Statements) {
  const query = target.query.bind(target);
  const exec = target.exec.bind(target);
  target.query = (sql, params, options) => spanned(sql, () => query(sql, params, options));
  target.exec = (sql) => spanned(sql, () => exec(sql));
}

/** Gives every statement `pglite` runs, in a transaction or not, a span. */
export function traceQueries(pglite: PgliteThread): PgliteThread {
  traceStatements(pglite);
  const transaction = pglite.transaction.bind(pglite);
  pglite.transaction = (callback) => transaction((tx) => {
    traceStatements(tx);
    return callback(tx);
  });
  return pglite;
}
