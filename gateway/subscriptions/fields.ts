import type { LiveField } from '../../subgraphs/platform/webhooks/events.ts';

/** The Subscription fields, as the areas declare them (subgraphs/<area>/event-types.ts, catalogued in subgraphs/events.ts). */
export { LIVE_FIELDS } from '../../subgraphs/events.ts';
export type { LiveField };

export const resourceKeyOf = (field: LiveField, id: string) => `${field.kind}:${id}`;
