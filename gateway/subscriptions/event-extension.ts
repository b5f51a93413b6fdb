import type { FormattedExecutionResult } from 'graphql';
import type { CommittedEvent } from '../../subgraphs/platform/events/bus.ts';

/**
 * A copy of `result` naming the event it was run for in `extensions.event`: its id, type and when it
 * occurred, and, for a result that covers several events (coalesced while its client was over
 * budget: the entity's latest state), how many with `coalesced` (the event named is the latest).
 */
export function withEvent(result: FormattedExecutionResult, event: CommittedEvent, coalesced?: number): FormattedExecutionResult {
  const named = { id: event.eventId, type: event.type, occurredAt: event.occurredAt, ...(coalesced ? { coalesced } : {}) };
  return { ...result, extensions: { ...result.extensions, event: named } };
}
