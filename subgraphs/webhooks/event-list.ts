import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { decodeCursor, encodeCursor } from '../platform/cursor.ts';
import { tenantOf } from '../platform/db/rows.ts';
import { badInput } from '../platform/errors.ts';
import { DELIVERIES } from './deliver.ts';
import { EVENTS } from './history.ts';

export const DEFAULT_EVENTS_PAGE = 20;
export const MAX_EVENTS_PAGE = 100;
/** The longest resource key the history holds (its column). */
const RESOURCE_MAX = 300;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const DELIVERY_STATES = ['PENDING', 'FAILED', 'DELIVERED'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

export interface EventFilter {
  type?: string | null;
  resource?: string | null;
  from?: Date | null;
  to?: Date | null;
  deliveryState?: DeliveryState | null;
}

/** An event of the history with its deliveries counted by state. */
export interface ListedEvent {
  id: string;
  type: string;
  occurredAt: Date;
  resource: string;
  data: { path: string; resource: unknown };
  deliveries: { pending: number; failed: number; succeeded: number };
}

export interface EventPage {
  nodes: ListedEvent[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** The listing's position: (occurredAt, id), both descending. */
interface Position {
  at: Date;
  id: string;
}

const readPosition = (keys: unknown[]): Position | null => {
  const [at, id] = keys;
  if (keys.length !== 2 || typeof at !== 'string' || typeof id !== 'string' || !UUID.test(id)) return null;
  const date = new Date(at);
  return Number.isNaN(date.getTime()) ? null : { at: date, id };
};

/** `exists` over the event's deliveries in `status`. */
const some = (status: string, op = '=') =>
  `exists (select 1 from ${DELIVERIES} d where d.event_id = e.id and d.org_id = e.org_id and d.status ${op} '${status}')`;

/**
 * The deliveryState filter: pending = some delivery not yet final, failed = some failed finally,
 * delivered = some delivery and every one succeeded.
 */
const STATE_CONDITION: Record<DeliveryState, string> = {
  PENDING: some('PENDING'),
  FAILED: some('FAILED'),
  DELIVERED: `${some('SUCCEEDED')} and not ${some('SUCCEEDED', '<>')}`,
};

/**
 * The organisation's events from the history, newest first, one page of `first` read as
 * `first + 1` rows. The conditions follow the indexes: (org, occurredAt, id), (org, type, occurredAt,
 * id), (org, resource, occurredAt, id); the cursor is written `occurredAt <= at and (occurredAt < at or
 * id < id)` so that its first half bounds the index scan.
 */
export async function listEvents(
  em: EntityManager,
  filter: EventFilter,
  first: number,
  after?: string | null,
): Promise<EventPage> {
  if (!Number.isInteger(first) || first < 1 || first > MAX_EVENTS_PAGE) {
    throw badInput(`first must be a whole number from 1 to ${MAX_EVENTS_PAGE}`, 'first');
  }
  if (
    filter.resource != null &&
    (filter.resource.length > RESOURCE_MAX || filter.resource.includes('\u0000'))
  ) {
    throw badInput(
      `resource must be a resource key (kind:id) of at most ${RESOURCE_MAX} characters`,
      'resource',
    );
  }
  if (filter.from && filter.to && filter.from >= filter.to)
    throw badInput('from must come before to', 'from');
  const position = decodeCursor(after, readPosition);
  const where = ['e.org_id = ?'];
  const params: unknown[] = [tenantOf(em)];
  const add = (condition: string, ...values: unknown[]) => {
    where.push(condition);
    params.push(...values);
  };
  if (filter.type) add('e.type = ?', filter.type);
  if (filter.resource != null) add('e.resource_key = ?', filter.resource);
  if (filter.from) add('e.occurred_at >= ?::timestamptz', filter.from.toISOString());
  if (filter.to) add('e.occurred_at < ?::timestamptz', filter.to.toISOString());
  if (filter.deliveryState) add(STATE_CONDITION[filter.deliveryState]);
  if (position) {
    const at = position.at.toISOString();
    add(
      'e.occurred_at <= ?::timestamptz and (e.occurred_at < ?::timestamptz or e.id < ?::uuid)',
      at,
      at,
      position.id,
    );
  }
  const rows = await selectEvents(em, where.join(' and '), [...params, first + 1]);
  const nodes = rows.slice(0, first);
  const last = nodes.at(-1);
  return {
    nodes,
    pageInfo: {
      hasNextPage: rows.length > first,
      endCursor: last ? encodeCursor([last.occurredAt.toISOString(), last.id]) : null,
    },
  };
}

/** One event of the organisation; null for an id that names none (or not a UUID). */
export async function findEvent(em: EntityManager, id: string): Promise<ListedEvent | null> {
  if (!UUID.test(id)) return null;
  const [event] = await selectEvents(em, 'e.org_id = ? and e.id = ?::uuid', [tenantOf(em), id, 1]);
  return event ?? null;
}

interface EventRow {
  id: string;
  type: string;
  occurred_at: Date | string;
  resource_key: string;
  resource_path: string;
  resource: unknown;
  pending: number | string;
  failed: number | string;
  succeeded: number | string;
}

/** The page first, then its deliveries counted per event (an index probe each, on (event_id, status)). */
async function selectEvents(em: EntityManager, where: string, params: unknown[]): Promise<ListedEvent[]> {
  const rows = await (em as SqlEntityManager).getConnection().execute<EventRow[]>(
    `select p.*, c.pending, c.failed, c.succeeded
    from (select e.id, e.org_id, e.type, e.occurred_at, e.resource_key, e.resource_path, e.resource from ${EVENTS} e
      where ${where} order by e.occurred_at desc, e.id desc limit ?) p
    cross join lateral (select count(*) filter (where d.status = 'PENDING') as pending,
        count(*) filter (where d.status = 'FAILED') as failed, count(*) filter (where d.status = 'SUCCEEDED') as succeeded
      from ${DELIVERIES} d where d.event_id = p.id and d.org_id = p.org_id) c
    order by p.occurred_at desc, p.id desc`,
    params,
    'all',
  );
  return rows.map((row) => ({
    id: row.id,
    type: row.type,
    occurredAt: new Date(row.occurred_at),
    resource: row.resource_key,
    data: {
      path: row.resource_path,
      resource: typeof row.resource === 'string' ? JSON.parse(row.resource) : row.resource,
    },
    deliveries: {
      pending: Number(row.pending),
      failed: Number(row.failed),
      succeeded: Number(row.succeeded),
    },
  }));
}
