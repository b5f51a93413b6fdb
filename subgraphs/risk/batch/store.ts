import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError, conflict, notFound } from '../../platform/errors.ts';
import type { Caller } from '../../platform/auth/tokens.ts';
import { RISK_BATCH_MAX_QUEUED, RISK_BATCH_RETENTION_DAYS } from '../rules.ts';
import { RiskBatch, type BatchStatus } from './entities.ts';
import type { BatchInputRow } from './input.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DAY_MS = 86_400_000;
/** Rows inserted per statement (one JSON parameter each). */
const INSERT_CHUNK = 2000;
export const FINISHED: readonly BatchStatus[] = ['SUCCEEDED', 'FAILED', 'CANCELLED'];

export type Run = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/** Statements in one transaction of `em`, committed when `fn` resolves. */
export function transaction<T>(em: EntityManager, fn: (run: Run, tx: EntityManager) => Promise<T>) {
  return (em as SqlEntityManager).transactional(async (tx) => {
    const connection = tx.getConnection();
    const ctx = tx.getTransactionContext();
    return fn((sql, params = []) => connection.execute(sql, params, 'all', ctx), tx);
  }) as Promise<T>;
}

/**
 * A new job of the caller's organisation (the tenant subscriber stamps it) with its rows, QUEUED; past
 * RISK_BATCH_MAX_QUEUED queued jobs of the client it is 429. The count and the insert run under a lock
 * of the client, so that concurrent submissions cannot both pass it.
 */
export async function submitBatch(em: EntityManager, caller: Caller, rows: BatchInputRow[]) {
  return transaction(em, async (run, tx) => {
    await run('select pg_advisory_xact_lock(hashtext(?))', [`risk-batch-client:${caller.clientId}`]);
    const [{ queued }] = await run(`select count(*)::int as "queued" from "risk"."risk_batches"
      where "client_id" = ? and "status" = 'QUEUED'`, [caller.clientId]);
    if (Number(queued) >= RISK_BATCH_MAX_QUEUED) {
      throw new AppError('RATE_LIMITED',
        `at most ${RISK_BATCH_MAX_QUEUED} batch jobs of a client wait at once: retry when one has started`,
        { max: RISK_BATCH_MAX_QUEUED });
    }
    const batch = tx.create(RiskBatch, {
      clientId: caller.clientId, status: 'QUEUED', total: rows.length, processed: 0, failedRows: 0, busyMs: 0,
      expiresAt: new Date(Date.now() + RISK_BATCH_RETENTION_DAYS * DAY_MS),
    } as never);
    await tx.flush();
    for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
      const chunk = rows.slice(start, start + INSERT_CHUNK).map((r, i) => ({ seq: start + i, ...r }));
      await run(`insert into "risk"."risk_batch_rows" ("batch_id", "seq", "row_id", "wkt", "radius", "error")
        select ?, "seq", "rowId", "wkt", "radius", "error" from json_to_recordset(?::json)
        as r("seq" int, "rowId" text, "wkt" text, "radius" double precision, "error" text)`,
      [batch.id, JSON.stringify(chunk)]);
    }
    return batch;
  });
}

/** The caller's organisation's job (the tenant filter), or null: another's, an expired one or no such id. */
export async function findBatch(em: EntityManager, id: string): Promise<RiskBatch | null> {
  if (!UUID.test(id)) return null;
  const batch = await em.findOne(RiskBatch, { id }, { refresh: true });
  return batch && batch.expiresAt > new Date() ? batch : null;
}

/**
 * Cancels a queued or running job. It races its runner's commits on the job's row: a runner that
 * commits a chunk or the end first (holding the row) wins, and a finished job is 409; a job already
 * cancelled is answered as it is.
 */
export async function cancelBatch(em: EntityManager, id: string): Promise<RiskBatch> {
  const batch = await findBatch(em, id);
  if (!batch) throw notFound('batch', id);
  const [cancelled] = await transaction(em, (run) => run(`update "risk"."risk_batches"
    set "status" = 'CANCELLED', "finished_at" = now(), "runner" = null, "lease_until" = null
    where "id" = ? and "status" in ('QUEUED', 'RUNNING') returning "id"`, [id]));
  const now = await findBatch(em, id);
  if (!now) throw notFound('batch', id);
  if (!cancelled && now.status !== 'CANCELLED') {
    throw conflict(`the batch has ${now.status}: it can no longer be cancelled`, { batchStatus: now.status });
  }
  return now;
}

/** A result row as stored. */
export interface BatchResultRow {
  rowId: string;
  wkt: string | null;
  done: boolean;
  riskIndex: number | null;
  crashes: number | null;
  fatalities: number | null;
  areaKm2: number | null;
  error: string | null;
}

/** Every row of a finished job, in input order, as one JSON text parsed once. */
export async function resultRows(em: EntityManager, batch: RiskBatch): Promise<BatchResultRow[]> {
  if (!FINISHED.includes(batch.status)) {
    const progress = `progress ${batch.processed} of ${batch.total}`;
    throw conflict(`the batch is ${batch.status}: its result is ready once it has finished (${progress})`,
      { batchStatus: batch.status });
  }
  const [row] = await transaction(em, (run) => run(`select coalesce(json_agg(json_build_object(
      'rowId', "row_id", 'wkt', "wkt", 'done', "done", 'riskIndex', "risk_index", 'crashes', "crashes",
      'fatalities', "fatalities", 'areaKm2', "area_km2", 'error', "error") order by "seq"), '[]')::text as "rows"
    from "risk"."risk_batch_rows" where "batch_id" = ?`, [batch.id]));
  return JSON.parse(String(row.rows)) as BatchResultRow[];
}
