import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { resolveReceiver, type ResolvedAddress } from './receiver-url.ts';

export interface SendLimits {
  timeoutMs: number;
  /** Bytes of the receiver's response read at most (the rest is dropped). */
  maxResponseBytes: number;
}

export interface SendResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  durationMs: number;
}

/** The three Standard Webhooks headers for one message (`id` stays the same on every retry). */
export function signedHeaders(secret: string, id: string, body: string, at = new Date()): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}

/** Connects to the addresses checked beforehand only, so a DNS answer that changes after the check is never used. */
function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, addresses);
    else callback(null, addresses[0].address, addresses[0].family);
  }) as LookupFunction;
}

/**
 * POSTs one signed webhook. 2xx is success; anything else (including a redirect, which is never
 * followed), a timeout or a refused address is a failure to retry. Reads at most
 * `maxResponseBytes` of the answer.
 */
export async function sendWebhook(target: string, secret: string, id: string, body: string, limits: SendLimits): Promise<SendResult> {
  const started = performance.now();
  const done = (ok: boolean, status: number | null, error: string | null): SendResult =>
    ({ ok, status, error, durationMs: Math.round(performance.now() - started) });
  const url = new URL(target);
  let addresses: ResolvedAddress[];
  try {
    addresses = await resolveReceiver(url);
  } catch (error) {
    return done(false, null, (error as Error).message);
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    const request = client.request(url, {
      method: 'POST',
      lookup: pinnedLookup(addresses),
      headers: {
        'content-type': 'application/json', 'user-agent': 'fleet-risk-graph-webhooks/1',
        'content-length': Buffer.byteLength(body), ...signedHeaders(secret, id, body),
      },
      signal: AbortSignal.timeout(limits.timeoutMs),
    }, (response) => {
      const status = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > limits.maxResponseBytes) response.destroy();
      });
      const finish = () => resolve(status >= 200 && status < 300 ? done(true, status, null) : done(false, status, `receiver answered ${status}`));
      response.on('end', finish);
      response.on('close', finish);
      response.on('error', finish);
    });
    request.on('error', (error: Error) => {
      resolve(done(false, null, error.name === 'TimeoutError' || error.name === 'AbortError' ? `no answer within ${limits.timeoutMs} ms` : error.message));
    });
    request.end(body);
  });
}
