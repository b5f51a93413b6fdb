import type { FormattedExecutionResult } from 'graphql';
import type { CommittedEvent } from '../../subgraphs/platform/events/bus.ts';

/** What `extensions.event` of a pushed result names: the event it answers (the latest, when `coalesced`). */
export interface EventExtension {
  id: string;
  type: string;
  occurredAt: string;
  /** Events this result stands for, when more than one were coalesced into it. */
  coalesced?: number;
}

/** What names an event: a CommittedEvent, or a replayed one (the history's, without its resource). */
export type EventNamed = Pick<CommittedEvent, 'eventId' | 'type' | 'occurredAt'>;

/**
 * A copy of a subscription's result carrying `extensions.event: { id, type, occurredAt }` (and
 * `coalesced: n` when it stands for n events): the id a client resumes `after`, and SSE's `id:` field.
 */
export function withEvent(
  result: FormattedExecutionResult, event: EventNamed, coalesced?: number,
): FormattedExecutionResult {
  const { eventId: id, type, occurredAt } = event;
  const extension: EventExtension = { id, type, occurredAt, ...(coalesced ? { coalesced } : {}) };
  return { ...result, extensions: { ...result.extensions, event: extension } };
}

/** The id of the event a pushed result names (withEvent), or undefined. */
export function eventIdOf(result: FormattedExecutionResult): string | undefined {
  return (result.extensions?.event as EventExtension | undefined)?.id;
}
