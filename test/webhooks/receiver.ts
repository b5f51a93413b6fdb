import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received { at: number; path: string; headers: IncomingHttpHeaders; body: string; json: Record<string, any> } // eslint-disable-line @typescript-eslint/no-explicit-any

/** A webhook receiver on loopback: records every POST (and hands it to `onReceived`); answers `status` (503 while "down"). */
export async function startReceiver(onReceived: (r: Received) => void = () => undefined) {
  const received: Received[] = [];
  const state = { status: 200 };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (state.status < 300) {
        const r = { at: Date.now(), path: req.url ?? '', headers: req.headers, body, json: JSON.parse(body) };
        received.push(r);
        onReceived(r);
      }
      res.writeHead(state.status).end(state.status < 300 ? 'ok' : 'down');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url, received, state,
    /** Verifies a received request with the subscription's secret (throws when the signature does not match). */
    verify: (secret: string, r: Received) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>),
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** Waits until `check` returns a truthy value, polling every 20 ms, for at most `ms`. */
export async function waitFor<T>(check: () => T | Promise<T>, ms: number, what: string): Promise<NonNullable<T>> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
