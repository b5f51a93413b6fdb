import type { CommittedEvent } from '../platform/events/bus.ts';
import type { Run } from '../platform/db/run.ts';

export const EVENTS = '"webhooks"."events"';
/** Rows one pruning statement deletes, so a large backlog never holds one long transaction. */
const PRUNE_BATCH = 5_000;

/** Records a committed event in the history; the same event again (a redelivery, a relay's second publish) changes nothing. */
export async function recordHistory(run: Run, event: CommittedEvent): Promise<void> {
  await run(`insert into ${EVENTS} (id, source, seq, org_id, type, resource_key, resource_path, resource, occurred_at, recorded_at)
    values (?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, now()) on conflict (id) do nothing`,
  [event.eventId, event.source, event.seq, event.orgId, event.type, event.resourceKey, event.resourcePath, JSON.stringify(event.resource), event.occurredAt]);
}

/**
 * Deletes the events older than `days`, in batches; returns how many. Callers run it under the
 * pruning lock (worker.ts), so one process at a time does it.
 */
export async function pruneHistory(run: Run, days: number): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await run(`delete from ${EVENTS} where id in (
      select id from ${EVENTS} where occurred_at < now() - (? * interval '1 day') limit ${PRUNE_BATCH}) returning id`, [days]);
    total += deleted.length;
    if (deleted.length < PRUNE_BATCH) return total;
  }
}
