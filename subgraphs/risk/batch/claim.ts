import type { EntityManager } from '@mikro-orm/core';
import { holdsRow } from '../../platform/db/run.ts';
import { RISK_BATCH_MAX_RUNNING } from '../rules.ts';
import type { RowScore } from './score.ts';
import { transaction, type Run } from './store.ts';

/**
 * The database side of a runner: which job it holds (a lease it renews with every chunk it commits),
 * the rows it scores next, and the commits that a cancellation races. Every write checks that the job
 * is still RUNNING and still this runner's, holding the job's row (`for update`) while it writes.
 */

/** How long a runner holds a job without a commit: a crashed runner's job is taken over after it. */
export const LEASE_SECONDS = 60;

export interface ClaimedJob { id: string; total: number; busyMs: number }
export interface PendingRow { seq: number; wkt: string | null; radius: number | null; error: string | null }
export type ScoredRow = RowScore & { seq: number };

/** A job a runner may take: queued, or running on a lease that ran out, and not expired. */
const CLAIMABLE = `(b."status" = 'QUEUED'
    or (b."status" = 'RUNNING' and (b."lease_until" is null or b."lease_until" < now())))
  and b."expires_at" > now()`;

/**
 * Whether any job may be claimable: one statement, outside a transaction. Every process's runner
 * polls every RISK_BATCH_POLL_MS, mostly to find nothing; on PGlite its claim transaction held the
 * one session each time, and requests' statements waited for it.
 */
const anyClaimable = (em: EntityManager) =>
  holdsRow((sql, params) => em.getConnection().execute(sql, params, 'all'), `"risk"."risk_batches" b where ${CLAIMABLE}`);

/**
 * The oldest queued job, or a running one whose runner stopped renewing its lease (resumed after its
 * last committed chunk), of a client that runs fewer than RISK_BATCH_MAX_RUNNING jobs. Claims are
 * serialised by one transaction-scoped lock (the per-client count must not race), and a job row another
 * transaction holds (a cancellation) is skipped.
 */
export async function claimJob(em: EntityManager, runner: string): Promise<ClaimedJob | null> {
  if (!await anyClaimable(em)) return null;
  return transaction(em, async (run) => {
    await run(`select pg_advisory_xact_lock(hashtext('risk-batch-claim'))`);
    const [job] = await run(`select b."id", b."total", b."busy_ms" as "busyMs" from "risk"."risk_batches" b
      where ${CLAIMABLE}
        and (select count(*) from "risk"."risk_batches" r where r."client_id" = b."client_id"
          and r."status" = 'RUNNING' and r."lease_until" >= now()) < ?
      order by b."created_at" limit 1 for update skip locked`, [RISK_BATCH_MAX_RUNNING]);
    if (!job) return null;
    await run(`update "risk"."risk_batches" set "status" = 'RUNNING', "runner" = ?,
      "lease_until" = now() + make_interval(secs => ?), "started_at" = coalesce("started_at", now())
      where "id" = ?`, [runner, LEASE_SECONDS, job.id]);
    return { id: String(job.id), total: Number(job.total), busyMs: Number(job.busyMs) };
  });
}

/** The next rows of the job not yet committed, in input order. */
export async function pendingRows(em: EntityManager, id: string, limit: number): Promise<PendingRow[]> {
  const rows = await transaction(em, (run) => run(`select "seq", "wkt", "radius", "error"
    from "risk"."risk_batch_rows" where "batch_id" = ? and not "done" order by "seq" limit ?`, [id, limit]));
  return rows as unknown as PendingRow[];
}

/** Locks the job's row; true when it is still RUNNING and this runner's. */
async function stillMine(run: Run, id: string, runner: string) {
  const [job] = await run(`select "status", "runner" from "risk"."risk_batches" where "id" = ? for update`, [id]);
  return job?.status === 'RUNNING' && job.runner === runner;
}

/**
 * Commits a chunk's results with the job's progress and working time, and renews the lease; false
 * (nothing written) when the job is no longer this runner's: cancelled, or taken over.
 */
export async function commitChunk(em: EntityManager, id: string, runner: string, scored: ScoredRow[], busyMs: number) {
  return transaction(em, async (run) => {
    if (!await stillMine(run, id, runner)) return false;
    await run(`update "risk"."risk_batch_rows" t set "done" = true, "risk_index" = r."riskIndex",
      "crashes" = r."crashes", "fatalities" = r."fatalities", "area_km2" = r."areaKm2", "error" = r."error"
      from json_to_recordset(?::json) as r("seq" int, "riskIndex" double precision, "crashes" int,
        "fatalities" int, "areaKm2" double precision, "error" text)
      where t."batch_id" = ? and t."seq" = r."seq"`, [JSON.stringify(scored), id]);
    const failed = scored.filter((s) => s.error !== null).length;
    await run(`update "risk"."risk_batches" set "processed" = "processed" + ?, "failed_rows" = "failed_rows" + ?,
      "busy_ms" = "busy_ms" + ?, "lease_until" = now() + make_interval(secs => ?) where "id" = ?`,
    [scored.length, failed, Math.round(busyMs), LEASE_SECONDS, id]);
    return true;
  });
}

/** Ends the job (SUCCEEDED, or FAILED with why), if it is still this runner's. */
export async function finishJob(
  em: EntityManager, id: string, runner: string, status: 'SUCCEEDED' | 'FAILED', error: string | null = null,
) {
  return transaction(em, async (run) => {
    if (!await stillMine(run, id, runner)) return false;
    await run(`update "risk"."risk_batches" set "status" = ?, "error" = ?, "finished_at" = now(),
      "runner" = null, "lease_until" = null where "id" = ?`, [status, error, id]);
    return true;
  });
}

/** Hands the job back (a stopping process): the next runner, here or elsewhere, resumes it at once. */
export async function releaseJob(em: EntityManager, id: string, runner: string) {
  await transaction(em, (run) => run(`update "risk"."risk_batches" set "lease_until" = null
    where "id" = ? and "runner" = ? and "status" = 'RUNNING'`, [id, runner]));
}

/** Deletes the jobs past their 7 days, with their rows. */
export async function pruneJobs(em: EntityManager) {
  await transaction(em, (run) => run(`delete from "risk"."risk_batches" where "expires_at" < now()`));
}
