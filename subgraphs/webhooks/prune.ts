import type { Database } from '../platform/db/orm.ts';
import { inTransaction } from '../platform/db/run.ts';
import { DELIVERIES } from './deliver.ts';
import { pruneHistory } from './history.ts';

/** Finished deliveries stay readable in the log this long, then go. */
export const LOG_RETENTION_DAYS = 30;
/** The advisory-lock key of pruning (`whpr`), so one process at a time prunes, whatever the number of processes. */
export const PRUNE_LOCK = 0x77687072;

/**
 * Deletes the history older than `historyDays` and the finished deliveries past the log's retention,
 * under a transaction-scoped advisory lock: a process that finds it taken skips this round (another
 * one is pruning), and answers false.
 */
export async function prune(db: Database, historyDays: number): Promise<boolean> {
  return inTransaction(db, async (run) => {
    const [lock] = await run('select pg_try_advisory_xact_lock(?) as ok', [PRUNE_LOCK]);
    if (!lock?.ok) return false;
    await pruneHistory(run, historyDays);
    await run(`delete from ${DELIVERIES} where status <> 'PENDING' and created_at < now() - interval '${LOG_RETENTION_DAYS} days'`);
    return true;
  });
}
