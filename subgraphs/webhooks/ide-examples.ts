import type { IdeExample } from '../platform/subgraph.ts';

/**
 * The GraphQL IDE's example tabs for webhook subscriptions: validated against the API schema (test/gateway/ide.test.ts) and
 * typed by `npm run codegen`.
 */
export const ideExamples: readonly IdeExample[] = [
  {
    query: `# Webhook subscriptions of the organisation (any token); webhookDeliveries(subscriptionId) reads a delivery log. See docs/webhooks.md.
query WebhookLog {
  webhookSubscriptions { id url eventTypes createdAt }
}`,
  },
];
