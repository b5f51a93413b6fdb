import { createRequire } from 'node:module';
import type * as GraphQL from 'graphql';
import type { CommittedEvent } from '../../subgraphs/platform/events/bus.ts';
import type { RecordedEventRef as Ref } from '../../subgraphs/platform/events/history.ts';
import { statusForCode, type ErrorCode } from '../../subgraphs/platform/errors.ts';
import { SubscriptionRefused, type PreparedSubscription } from './document.ts';
import type { HistoryReader } from './history-access.ts';

// graphql-ws recognises refusals by the CommonJS module's GraphQLError (see document.ts).
const cjs = createRequire(import.meta.url)('graphql') as typeof GraphQL;

const EVENT_HISTORY_UNAVAILABLE = 'EVENT_HISTORY_UNAVAILABLE' satisfies ErrorCode;
/** Events of this process remembered for replay: the history records one a moment after it goes live. */
export const RECENT_EVENTS = 10_000;
/** History rows read per statement while replaying. */
export const REPLAY_PAGE = 100;

const ref = ({ resource: _resource, ...rest }: CommittedEvent): Ref => rest;

/**
 * The last RECENT_EVENTS events this process received live (without their resources). The history is
 * written by a durable consumer, after the live listeners had the event: a client that resumes after
 * an event it just received, or whose missed events went live just before it resumed, finds them here
 * while their rows are still being written.
 */
export class RecentEvents {
  private readonly byId = new Map<string, Ref>();

  remember(event: CommittedEvent) {
    this.byId.set(event.eventId, ref(event));
    // A Map iterates in insertion order: the first is the oldest.
    if (this.byId.size > RECENT_EVENTS) this.byId.delete(this.byId.keys().next().value!);
  }

  find(orgId: string, id: string) {
    const event = this.byId.get(id);
    return event?.orgId === orgId ? event : undefined;
  }

  /** The organisation's events of `resourceKey` and `types` past `seq`, in seq order. */
  after(orgId: string, resourceKey: string, seq: number, types: readonly string[]) {
    return [...this.byId.values()]
      .filter((e) => e.orgId === orgId && e.resourceKey === resourceKey && e.seq > seq)
      .filter((e) => types.includes(e.type))
      .sort((a, b) => a.seq - b.seq);
  }
}

/**
 * Resuming a subscription `after` an event (replay, docs/subscriptions.md#resuming-after-an-event):
 * the event must be one the caller's organisation's history holds for the watched entity. Anything
 * else (unknown, another organisation's, another entity's, pruned) is one refusal,
 * EVENT_HISTORY_UNAVAILABLE, which names the oldest event held for the entity only when the id was
 * found in the caller's organisation: an id of another organisation answers as an unknown one.
 */
export class EventReplay {
  readonly recent = new RecentEvents();
  private readonly reader?: HistoryReader;

  constructor(reader: HistoryReader | undefined) {
    this.reader = reader;
  }

  /** The event `prepared.after` names, or undefined without one; refuses one the history does not hold. */
  async anchor(orgId: string, prepared: PreparedSubscription): Promise<Ref | undefined> {
    const { after, resourceKey } = prepared;
    if (after === undefined) return undefined;
    const found = this.recent.find(orgId, after) ?? await this.read(() => this.reader?.find(orgId, after));
    if (found?.resourceKey === resourceKey) return found;
    const oldest = found ? await this.read(() => this.reader?.oldest(orgId, resourceKey)) : undefined;
    const why = `No event history after '${after}' for this subscription: the id is unknown, not this `
      + 'entity\'s, or older than the history kept (EVENTS_HISTORY_DAYS). '
      + 'Subscribe without `after` to start from now';
    const code = EVENT_HISTORY_UNAVAILABLE;
    const extensions = { code, after, ...(oldest ? { oldestEventId: oldest.eventId } : {}) };
    throw new SubscriptionRefused([new cjs.GraphQLError(why, { extensions })], statusForCode(code));
  }

  /** A history read before the subscription starts: its failure (the database down) refuses it as 503. */
  private async read<T>(query: () => Promise<T> | undefined): Promise<T | undefined> {
    try {
      return await query();
    } catch {
      const extensions = { code: 'SERVICE_UNAVAILABLE' satisfies ErrorCode };
      const why = 'The event history could not be read; resume again shortly';
      throw new SubscriptionRefused([new cjs.GraphQLError(why, { extensions })], statusForCode(extensions.code));
    }
  }

  /**
   * The organisation's events of the watched entity after `anchor`, of the field's types, in commit
   * order: the history's, a page at a time, then those of this process not recorded yet.
   */
  async* events(orgId: string, prepared: PreparedSubscription, anchor: Ref): AsyncGenerator<Ref> {
    const { resourceKey, field: { events: types } } = prepared;
    let seq = anchor.seq;
    for (;;) {
      const page = await this.reader?.after({ orgId, resourceKey, seq, types, limit: REPLAY_PAGE }) ?? [];
      for (const event of page) {
        seq = event.seq;
        yield event;
      }
      if (page.length < REPLAY_PAGE) break;
    }
    for (const event of this.recent.after(orgId, resourceKey, seq, types)) yield event;
  }
}
