import type { Stack } from '../../gateway/stack.ts';
import { WebhookOutbox } from '../../subgraphs/platform/webhooks/outbox.ts';
import { waitFor } from '../webhooks/receiver.ts';

/** Rows of organisation-owned tables that change on their own: the webhook outboxes, emptied by the relay, and the event history, filled from the bus. */
const transient = new Set(['WebhookOutbox', 'RecordedEvent']);

/** Every row of every organisation-owned table of every in-process subgraph, as JSON (for before/after checks). */
export async function snapshotRows(stack: Stack, orgId?: string): Promise<Record<string, string>> {
  const snapshot: Record<string, string> = {};
  for (const subgraph of stack.subgraphs) {
    const em = subgraph.db.orm.em.fork();
    for (const meta of subgraph.db.orm.getMetadata()) {
      if (!meta.properties.orgId || meta.embeddable || meta.abstract || transient.has(meta.className)) continue;
      const where = orgId ? { orgId } : {};
      const rows = await em.find(meta.class, where as never, { filters: false, orderBy: { [meta.primaryKeys[0]]: 'asc' } as never });
      snapshot[`${subgraph.name}.${meta.className}`] = JSON.stringify(rows);
      em.clear();
    }
  }
  return snapshot;
}

/** Row counts of every organisation-owned table, by subgraph and entity. */
export async function countRows(stack: Stack): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const subgraph of stack.subgraphs) {
    const em = subgraph.db.orm.em.fork();
    for (const meta of subgraph.db.orm.getMetadata()) {
      if (!meta.properties.orgId || meta.embeddable || meta.abstract || transient.has(meta.className)) continue;
      counts[`${subgraph.name}.${meta.className}`] = await em.count(meta.class, {}, { filters: false });
    }
  }
  return counts;
}

/**
 * Resolves once every in-process area's outbox is empty, so every event committed so far has gone
 * live in this process (the relay deletes a row once the bus took it; the in-process bus hands it to
 * live listeners first). A subscription started then receives none of them: one started just after a
 * commit may otherwise still receive that commit's event (docs/subscriptions.md#guarantees-and-bounds).
 */
export async function outboxesEmpty(stack: Stack, timeoutMs = 10_000) {
  const unpublished = async () => {
    let rows = 0;
    for (const subgraph of stack.subgraphs) {
      const em = subgraph.db.orm.em.fork();
      if (em.getMetadata().find(WebhookOutbox)) rows += await em.count(WebhookOutbox, {}, { filters: false });
    }
    return rows;
  };
  await waitFor(async () => (await unpublished()) === 0, timeoutMs, 'every outbox row published');
}
