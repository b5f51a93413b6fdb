import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EntityManager } from '@mikro-orm/core';
import type { Worker, WorkerContext } from '../../platform/subgraph.ts';
import { inBackground } from '../../platform/db/statements.ts';
import { riskDataLoaded } from '../data/status.ts';
import { createAreaPool, type AreaPool } from '../geometry/pool.ts';
import {
  claimJob, commitChunk, finishJob, pendingRows, pruneJobs, releaseJob, type ClaimedJob, type PendingRow, type ScoredRow,
} from './claim.ts';
import { scoreRow, unscored } from './score.ts';

/** Rows committed together at most, and the longest a chunk works before it commits (its progress shows). */
const CHUNK_ROWS = 50;
const CHUNK_MS = 2_000;
const PRUNE_EVERY_MS = 10 * 60_000;

/**
 * Runs batch scoring jobs in this process, one at a time, beside the interactive Risk Index and
 * without its capacity: its own geometry threads (RISK_BATCH_WORKERS, the same budget per row), no
 * RISK_MAX_IN_FLIGHT slot, and a duty cycle (RISK_BATCH_DUTY_PERCENT) that leaves the event loop and
 * the database to requests. Each chunk of rows is committed with the job's progress, so a job
 * survives a restart: a stopping process hands it back, a crashed one's lease runs out, and the next
 * runner resumes after the last committed chunk. Several processes share the queue through the
 * database (claimJob); a cancellation is seen at the next commit, whose rows it discards.
 */
export function startBatchRunner({ db, config, log }: WorkerContext): Worker {
  if (!config.RISK_BATCH_WORKER) return { stop: async () => {} };
  const runner = randomUUID();
  const pool: AreaPool = createAreaPool({ ...config, RISK_WORKERS: config.RISK_BATCH_WORKERS }, log);
  const stopping = new AbortController();
  const pause = (ms: number) => sleep(ms, undefined, { signal: stopping.signal }).catch(() => undefined);
  const rest = (workedMs: number) => pause(workedMs * (100 / config.RISK_BATCH_DUTY_PERCENT - 1));
  const budgetMs = config.RISK_BATCH_MAX_JOB_SECONDS * 1000;

  /** Scores rows until the chunk is full or has taken CHUNK_MS; a row with an input fault keeps it. */
  async function scoreChunk(em: EntityManager, rows: PendingRow[]) {
    const scored: ScoredRow[] = [];
    const started = performance.now();
    let busy = 0;
    for (const row of rows) {
      if (stopping.signal.aborted || performance.now() - started > CHUNK_MS) break;
      const t0 = performance.now();
      const score = row.error || !row.wkt
        ? unscored(row.error ?? 'the geometry is missing')
        : await scoreRow(em, pool, row.wkt, row.radius);
      const worked = performance.now() - t0;
      busy += worked;
      scored.push({ seq: row.seq, ...score });
      await rest(worked);
    }
    return { scored, busy };
  }

  async function runJob(job: ClaimedJob) {
    let busyMs = job.busyMs;
    const em = db.orm.em.fork();
    for (;;) {
      if (busyMs > budgetMs) {
        const why = `the job passed its total budget of ${config.RISK_BATCH_MAX_JOB_SECONDS} s of work (RISK_BATCH_MAX_JOB_SECONDS)`;
        await finishJob(em, job.id, runner, 'FAILED', why);
        return;
      }
      const rows = await pendingRows(em, job.id, CHUNK_ROWS);
      if (rows.length === 0) {
        await finishJob(em, job.id, runner, 'SUCCEEDED');
        return;
      }
      em.clear();
      const { scored, busy } = await scoreChunk(em, rows);
      busyMs += busy;
      // Cancelled or taken over: what this chunk scored is dropped.
      if (scored.length && !await commitChunk(em, job.id, runner, scored, busy)) return;
      if (stopping.signal.aborted) {
        await releaseJob(em, job.id, runner);
        return;
      }
    }
  }

  const loop = async () => {
    await riskDataLoaded(db.orm.em);
    let pruned = 0;
    while (!stopping.signal.aborted) {
      try {
        if (Date.now() - pruned > PRUNE_EVERY_MS) {
          await pruneJobs(db.orm.em.fork());
          pruned = Date.now();
        }
        const job = await claimJob(db.orm.em.fork(), runner);
        if (job) {
          log.info({ batchId: job.id, rows: job.total }, 'batch scoring job started');
          await runJob(job);
          continue;
        }
      } catch (error) {
        // The database failed (or closes): the job's lease runs out and it is resumed, here or elsewhere.
        if (!stopping.signal.aborted) log.warn({ err: error }, 'batch scoring round failed; retrying');
      }
      await pause(config.RISK_BATCH_POLL_MS);
    }
  };
  // A job's statements are the process's own work, not a request's (statement counts leave them out).
  const running = inBackground(loop);
  return {
    async stop() {
      stopping.abort();
      await running;
      await pool.close();
    },
  };
}
