/**
 * GraphQL subscriptions from Node, as a client outside the browser holds them: graphql-ws on the
 * gateway's /graphql (Node's own WebSocket), the token in connection_init. Every result is kept in
 * arrival order with the time it arrived; `ended` says how the socket closed.
 */
import type { FormattedExecutionResult } from 'graphql';
import { createClient } from 'graphql-ws';

/** How a subscription ended: the socket's close code and reason, or an error. */
export interface Ended { code?: number; reason?: string; error?: string }

export interface Watch<T = Record<string, unknown>> {
  /** Results in arrival order, each with `Date.now()` at arrival. */
  results: { result: FormattedExecutionResult<T, unknown>; at: number }[];
  /** Settles when the server completes the subscription or the socket closes. */
  ended: Promise<Ended>;
  /** Unsubscribes and closes the socket. */
  stop(): Promise<void>;
}

/** `http://host:port` of a gateway to the WebSocket URL of its /graphql. */
export const graphqlWsUrl = (base: string) => `${base.replace(/^http/, 'ws')}/graphql`;

/** Subscribes `query` on its own graphql-ws connection to the gateway at `base`. */
export function watch<T = Record<string, unknown>>(base: string, token: string, query: string, variables: Record<string, unknown> = {}): Watch<T> {
  const results: Watch<T>['results'] = [];
  let end!: (ended: Ended) => void;
  const ended = new Promise<Ended>((resolve) => { end = resolve; });
  const client = createClient({
    url: graphqlWsUrl(base),
    webSocketImpl: WebSocket,
    connectionParams: { authorization: `Bearer ${token}` },
    retryAttempts: 0,
    on: { closed: (event) => { const { code, reason } = event as CloseEvent; end({ code, reason }); } },
  });
  const unsubscribe = client.subscribe<T>({ query, variables }, {
    next: (result) => { results.push({ result, at: Date.now() }); },
    error: (error) => { end(error instanceof Error ? { error: error.message } : { code: (error as CloseEvent).code, reason: (error as CloseEvent).reason }); },
    complete: () => { end({}); },
  });
  return {
    results,
    ended,
    async stop() {
      unsubscribe();
      await client.dispose();
    },
  };
}

/** The subscriptions the gateway at `base` holds now, over every transport (its /metrics). */
export async function subscriptionsHeld(base: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return [...text.matchAll(/^gateway_subscriptions_active(?:\{[^}]*\})? (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

/**
 * Waits until the gateway at `base` holds at least `count` subscriptions: an event committed after
 * that reaches them (one committed while a subscription is still starting may not).
 */
export async function untilHeld(base: string, count: number, timeoutMs = 15_000): Promise<void> {
  const started = Date.now();
  while ((await subscriptionsHeld(base)) < count) {
    if (Date.now() - started > timeoutMs) throw new Error(`${base} did not hold ${count} subscriptions within ${timeoutMs} ms (holds ${await subscriptionsHeld(base)})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
