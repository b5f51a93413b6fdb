import type { Run } from '../db/run.ts';
import type { CommittedEvent } from './bus.ts';

/** An event as the history keeps it for replay: all but its resource (a replayed result runs its query). */
export type RecordedEventRef = Omit<CommittedEvent, 'resource'>;

/** Up to `limit` events of one organisation's resource, of `types`, past `seq`. */
export interface HistoryQuery {
  orgId: string;
  resourceKey: string;
  seq: number;
  types: readonly string[];
  limit: number;
}

/**
 * The event history's reads for replay (subscriptions resumed `after` an event), declared by the area
 * that keeps the history (SubgraphDefinition.eventHistory) and run by the gateway on that area's
 * database. Every read is of one organisation.
 */
export interface EventHistory {
  /** The organisation's event `id`, or undefined (unknown, pruned, or another organisation's). */
  find(run: Run, orgId: string, id: string): Promise<RecordedEventRef | undefined>;
  /** The oldest event of the organisation's resource still held, or undefined. */
  oldest(run: Run, orgId: string, resourceKey: string): Promise<RecordedEventRef | undefined>;
  /** Up to `limit` events of the organisation's resource of `types` past `seq`, in commit (seq) order. */
  after(run: Run, query: HistoryQuery): Promise<RecordedEventRef[]>;
}
