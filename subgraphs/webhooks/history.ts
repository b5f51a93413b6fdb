import type { CommittedEvent } from '../platform/events/bus.ts';
import type { EventHistory, RecordedEventRef } from '../platform/events/history.ts';
import type { EventType } from '../platform/webhooks/events.ts';
import type { Row, Run } from '../platform/db/run.ts';

export const EVENTS = '"webhooks"."events"';
/** Rows one pruning statement deletes, so a large backlog never holds one long transaction. */
const PRUNE_BATCH = 5_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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

const REF_COLUMNS = 'id, source, seq, org_id, type, resource_key, resource_path, occurred_at';

const asRef = (row: Row): RecordedEventRef => ({
  eventId: String(row.id), source: String(row.source), seq: Number(row.seq), orgId: String(row.org_id),
  type: row.type as EventType, resourceKey: String(row.resource_key), resourcePath: String(row.resource_path),
  occurredAt: new Date(row.occurred_at as string | Date).toISOString(),
});

/** The history's reads for replay (the gateway's, on this area's database): by organisation, indexed. */
export const replayHistory: EventHistory = {
  async find(run, orgId, id) {
    // An id that is not a UUID is no event's (and would fail the cast).
    if (!UUID.test(id)) return undefined;
    const [row] = await run(`select ${REF_COLUMNS} from ${EVENTS} where id = ?::uuid and org_id = ?`,
      [id, orgId]);
    return row && asRef(row);
  },
  async oldest(run, orgId, resourceKey) {
    const [row] = await run(`select ${REF_COLUMNS} from ${EVENTS} where org_id = ? and resource_key = ?
      order by seq limit 1`, [orgId, resourceKey]);
    return row && asRef(row);
  },
  // Event types are `<resource>.<change>` in [a-z_.]: a text[] literal needs no quoting.
  async after(run, { orgId, resourceKey, seq, types, limit }) {
    const rows = await run(`select ${REF_COLUMNS} from ${EVENTS}
      where org_id = ? and resource_key = ? and seq > ? and type = any(?::text[])
      order by seq limit ${Number(limit)}`,
    [orgId, resourceKey, seq, `{${types.join(',')}}`]);
    return rows.map(asRef);
  },
};
