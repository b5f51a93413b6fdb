/** The PostgreSQL channel committed outbox rows were announced on, before the event bus (migrations only). */
export const LIVE_EVENTS_CHANNEL = 'live_events';

/**
 * Statements of the migration that makes `<schema>.webhook_outbox` announce each inserted row as a
 * LiveEvent on LIVE_EVENTS_CHANNEL. PostgreSQL delivers a notification only when its transaction
 * commits, in commit order, to every session listening in the database. The relay's deletes fire
 * nothing. Migrations only: the areas' migrations of 2026-11-24 install it and those of 2026-11-27 drop it
 * (the relays publish the outbox on the event bus instead); migrations already run must not change.
 */
export const createLiveEventsTrigger = (schema: string) => [
  `create or replace function "${schema}"."notify_live_event"() returns trigger language plpgsql as $body$
begin
  perform pg_notify('${LIVE_EVENTS_CHANNEL}', json_build_object(
    'source', TG_TABLE_SCHEMA, 'seq', new.seq, 'eventId', new.event_id, 'orgId', new.org_id, 'type', new.type,
    'resourceKey', new.resource_key, 'occurredAt', to_char(new.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::text);
  return null;
end
$body$;`,
  `create trigger "webhook_outbox_live_event" after insert on "${schema}"."webhook_outbox" for each row execute function "${schema}"."notify_live_event"();`,
];

export const dropLiveEventsTrigger = (schema: string) => [
  `drop trigger if exists "webhook_outbox_live_event" on "${schema}"."webhook_outbox";`,
  `drop function if exists "${schema}"."notify_live_event"();`,
];
