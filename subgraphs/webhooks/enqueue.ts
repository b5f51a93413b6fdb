import type { CommittedEvent } from '../platform/events/bus.ts';
import type { Run } from '../platform/db/run.ts';
import { DELIVERIES, SUBSCRIPTIONS } from './deliver.ts';

/** The body every subscription gets for `event`, signed and sent as is on every attempt. */
export const webhookPayload = (event: CommittedEvent) => JSON.stringify({
  id: event.eventId, type: event.type, timestamp: new Date(event.occurredAt).toISOString(),
  data: { path: event.resourcePath, resource: event.resource },
  ...(event.sandbox ? { sandbox: true } : {}),
});

/**
 * Inserts one pending delivery of `event` for each subscription of its organisation that asked for
 * its type; returns how many are new. One per subscription and event (the unique constraint), so an
 * event handed over again, by any worker process, delivers nothing twice.
 */
export async function enqueueDeliveries(run: Run, event: CommittedEvent): Promise<number> {
  const inserted = await run(`insert into ${DELIVERIES} (id, org_id, subscription_id, event_id, event_type, resource_key, source_seq, payload,
      status, attempts, next_attempt_at, attempt_log, created_at)
    select gen_random_uuid(), s.org_id, s.id, ?, ?, ?, ?, ?, 'PENDING', 0, now(), '[]'::jsonb, now()
    from ${SUBSCRIPTIONS} s where s.org_id = ? and s.event_types @> ?::jsonb
    on conflict (subscription_id, event_id) do nothing returning id`,
  [event.eventId, event.type, `${event.source}:${event.resourceKey}`, event.seq, webhookPayload(event), event.orgId, JSON.stringify([event.type])]);
  return inserted.length;
}
