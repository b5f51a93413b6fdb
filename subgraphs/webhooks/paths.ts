/** Base path of the webhooks area's REST paths. */
export const WEBHOOKS_PREFIX = '/platform/webhooks/v1';
