/**
 * How a subscription ends, as WebSocket close codes (graphql-ws's 44xx family); an SSE stream ends
 * with a last result whose error carries the same `closeCode`.
 */
export const CloseCode = {
  /** SIGTERM or the gateway closing: reconnect elsewhere. */
  GoingAway: 1001,
  /** The token is missing, invalid or expired, or its client was disabled or rotated. */
  Unauthorized: 4401,
  Forbidden: 4403,
  /** More than `queueMax` events waiting for a subscriber that does not read. */
  SlowConsumer: 4408,
  /** Over SUBSCRIPTIONS_MAX_PER_CLIENT or SUBSCRIPTIONS_MAX_PER_PROCESS. */
  TooManySubscriptions: 4429,
} as const;

/** The GraphQL error code a stream's last result carries for each close code. */
export const closeErrorCode: Record<number, string> = {
  [CloseCode.GoingAway]: 'SHUTTING_DOWN',
  [CloseCode.Unauthorized]: 'UNAUTHENTICATED',
  [CloseCode.Forbidden]: 'FORBIDDEN',
  [CloseCode.SlowConsumer]: 'SLOW_CONSUMER',
  [CloseCode.TooManySubscriptions]: 'TOO_MANY_SUBSCRIPTIONS',
};

/** A WebSocket close reason is at most 123 bytes. */
export const closeReason = (reason: string) => (Buffer.byteLength(reason) <= 123 ? reason : `${Buffer.from(reason).subarray(0, 120).toString().replace(/\uFFFD+$/, '')}...`);
