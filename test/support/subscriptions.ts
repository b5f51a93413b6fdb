import { createClient as createSseClient } from 'graphql-sse';
import { createClient as createWsClient, type Client } from 'graphql-ws';
import { meros } from 'meros/browser';
import WebSocket from 'ws';
import type { Gateway } from '../../gateway/app.ts';

export interface Received { data?: any; errors?: readonly { message: string; extensions?: Record<string, unknown> }[]; extensions?: Record<string, unknown> } // eslint-disable-line @typescript-eslint/no-explicit-any
export interface Closed { code: number; reason: string }

/** What one subscription received, in order, and how it ended. */
export interface Watcher {
  results: Received[];
  /** Resolves with the n-th result (1-based) once it arrived; rejects if the subscription ended before. */
  nth(n: number): Promise<Received>;
  /** Resolves when the subscription ends: completed, or with the error (a GraphQL error list, a close event) that ended it. */
  ended: Promise<unknown>;
  dispose(): void;
}

function watcher(subscribe: (sink: { next(value: Received): void; error(error: unknown): void; complete(): void }) => () => void): Watcher {
  const results: Received[] = [];
  const waiting: { n: number; resolve(value: Received): void; reject(error: unknown): void }[] = [];
  let finish!: (value: unknown) => void;
  let over: { error: unknown } | undefined;
  const ended = new Promise<unknown>((resolve) => { finish = resolve; });
  const settle = () => {
    for (const w of [...waiting]) {
      if (results.length >= w.n) w.resolve(results[w.n - 1]!);
      else if (over) w.reject(over.error ?? new Error(`the subscription ended after ${results.length} results`));
      else continue;
      waiting.splice(waiting.indexOf(w), 1);
    }
  };
  const dispose = subscribe({
    next(value) { results.push(value); settle(); },
    error(error) { over = { error }; settle(); finish(error); },
    complete() { over = { error: undefined }; settle(); finish(undefined); },
  });
  return {
    results, ended, dispose,
    nth: (n) => new Promise((resolve, reject) => { waiting.push({ n, resolve, reject }); settle(); }),
  };
}

/** A graphql-ws client (the `ws` package) of the gateway at `url`, sending `authorization` in connection_init; `closes` lists how its socket closed. */
export function wsClient(url: string, authorization: string | undefined, headers: Record<string, string> = {}) {
  const closes: Closed[] = [];
  /** The client's sockets (one per connection), e.g. to stop reading from one. */
  const sockets: WebSocket[] = [];
  let onClose: ((closed: Closed) => void) | undefined;
  const closed = new Promise<Closed>((resolve) => { onClose = resolve; });
  const client: Client = createWsClient({
    url: url.replace(/^http/, 'ws') + '/graphql',
    webSocketImpl: class extends WebSocket { constructor(address: string, protocols: string[]) { super(address, protocols, { headers }); sockets.push(this); } },
    connectionParams: authorization ? { authorization } : {},
    retryAttempts: 0,
    lazy: false,
    // Its close is in `closes` (the tests look at its code), not printed.
    onNonLazyError: () => undefined,
    shouldRetry: () => false,
    on: {
      closed: (event) => {
        const { code, reason } = event as { code: number; reason: string };
        closes.push({ code, reason: String(reason) });
        onClose?.({ code, reason: String(reason) });
      },
    },
  });
  return {
    client, closes, closed, sockets,
    subscribe: (query: string, variables: Record<string, unknown> = {}) => watcher((sink) => client.subscribe({ query, variables }, sink)),
    dispose: () => client.dispose(),
  };
}

/** A graphql-sse client of the gateway at `url` (a stream per subscription unless `singleConnection`). */
export function sseClient(url: string, authorization: string | undefined, singleConnection = false) {
  const client = createSseClient({ url: `${url}/graphql/stream`, headers: authorization ? { authorization } : {}, retryAttempts: 0, singleConnection });
  return {
    client,
    subscribe: (query: string, variables: Record<string, unknown> = {}) => watcher((sink) => client.subscribe({ query, variables }, sink)),
    dispose: () => client.dispose(),
  };
}

/** Accept of Apollo Client's HttpLink for a subscription. */
export const MULTIPART_ACCEPT = 'multipart/mixed;boundary="graphql";subscriptionSpec=1.0,application/json';

/**
 * A client of Apollo's multipart subscription protocol (POST /graphql), read with meros: each part's
 * `payload` is a result; a heartbeat `{}` is counted in `heartbeats`; `{ payload: null, errors }` ends the
 * subscription with those errors, as does a refusal answered as JSON (`refused`: its status and body).
 */
export function multipartClient(url: string, authorization: string | undefined) {
  const heartbeats: number[] = [];
  const refused: { status: number; body: unknown }[] = [];
  const subscribe = (query: string, variables: Record<string, unknown> = {}) => watcher((sink) => {
    const abort = new AbortController();
    void (async () => {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST', signal: abort.signal, body: JSON.stringify({ query, variables }),
        headers: { 'content-type': 'application/json', accept: MULTIPART_ACCEPT, ...(authorization ? { authorization } : {}) },
      });
      const parts = await meros<{ payload?: Received | null; errors?: Received['errors'] }>(response);
      if (!(Symbol.asyncIterator in parts)) {
        const body = await response.json() as Received;
        refused.push({ status: response.status, body });
        return sink.error(body.errors);
      }
      for await (const part of parts) {
        if (!part.json) throw new Error(`a part that is not JSON: ${String(part.body)}`);
        if (part.body.payload === undefined) heartbeats.push(Date.now());
        else if (part.body.payload === null) return sink.error(part.body.errors);
        else sink.next(part.body.payload);
      }
      sink.complete();
    })().catch((error: unknown) => { if (!abort.signal.aborted) sink.error(error); });
    return () => abort.abort();
  });
  return { subscribe, heartbeats, refused };
}

/** Resolves once the gateway holds `count` subscriptions: events committed before a subscription started are not its to receive. */
export async function subscriptionsActive(gateway: Gateway, count: number) {
  for (;;) {
    const { values } = await gateway.metrics.subscriptionsActive.get();
    if (values.reduce((sum, v) => sum + v.value, 0) === count) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
