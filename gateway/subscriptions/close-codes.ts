/**
 * How a subscription ends, as WebSocket close codes; an SSE stream ends with a last result whose
 * error carries the same `closeCode`. Chosen for graphql-ws's client (`createClient`): it gives up
 * on 4401 and 4429 (never retries a refusal or a cap in a loop), retries 1001, 1013 and 4408 with
 * its backoff, and reconnects at once after 1000 while it still has subscriptions to run.
 */
export const CloseCode = {
  /** A connection that never subscribed, closed after SUBSCRIPTIONS_IDLE_CLOSE_MS. */
  Idle: 1000,
  /** SIGTERM or the gateway closing: reconnect elsewhere. */
  GoingAway: 1001,
  /** A graphql-ws message over its size limit (the `ws` library closes with it). */
  MessageTooBig: 1009,
  /** The token could not be checked now (the database or Redis is down). */
  TryAgainLater: 1013,
  /** The token is missing, invalid or expired, or its client was disabled or rotated. */
  Unauthorized: 4401,
  Forbidden: 4403,
  /** More than `queueMax` events waiting, `bufferMax` bytes unsent, or no answer to a ping while results are unread. */
  SlowConsumer: 4408,
  /** Over SUBSCRIPTIONS_MAX_PER_CLIENT or SUBSCRIPTIONS_MAX_PER_PROCESS. */
  TooManySubscriptions: 4429,
  /** Over SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT or SUBSCRIPTIONS_MAX_CONNECTIONS_PER_PROCESS. */
  TooManyConnections: 4429,
} as const;

/** The GraphQL error code a stream's last result carries for each close code. */
export const closeErrorCode: Record<number, string> = {
  [CloseCode.GoingAway]: 'SHUTTING_DOWN',
  [CloseCode.Unauthorized]: 'UNAUTHENTICATED',
  [CloseCode.Forbidden]: 'FORBIDDEN',
  [CloseCode.SlowConsumer]: 'SLOW_CONSUMER',
  [CloseCode.TooManySubscriptions]: 'TOO_MANY_SUBSCRIPTIONS',
};

/**
 * Why a connection (WebSocket) or a stream (SSE) ended: the `reason` label of
 * gateway_subscriptions_closed_total. `unauthorized` is a token refused at connect, `revoked` one
 * refused later; `protocol_error` a message graphql-ws or `ws` refused (malformed, too big).
 */
export type CloseReason = 'client_closed' | 'keepalive_timeout' | 'slow_consumer' | 'idle' | 'too_many' | 'revoked'
  | 'shutdown' | 'unauthorized' | 'unavailable' | 'protocol_error';

const reasonByCode: Record<number, CloseReason> = {
  [CloseCode.Idle]: 'idle', [CloseCode.GoingAway]: 'shutdown', [CloseCode.TryAgainLater]: 'unavailable',
  [CloseCode.Unauthorized]: 'revoked', [CloseCode.SlowConsumer]: 'slow_consumer',
  [CloseCode.TooManySubscriptions]: 'too_many',
};

/** The reason of a close the server decided with `code`. */
export const closeReasonOf = (code: number): CloseReason => reasonByCode[code] ?? 'protocol_error';

/** A WebSocket close reason is at most 123 bytes. */
export const closeReason = (reason: string) => (Buffer.byteLength(reason) <= 123 ? reason : `${Buffer.from(reason).subarray(0, 120).toString().replace(/\uFFFD+$/, '')}...`);
