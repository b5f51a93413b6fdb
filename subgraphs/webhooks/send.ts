import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { pinnedLookup, resolvePublicUrl, type AddressPolicy, type ResolvedAddress } from '../platform/public-address.ts';

export interface SendLimits extends AddressPolicy {
  /** The whole attempt: name resolution, connection, answer. */
  timeoutMs: number;
  /** Bytes of the receiver's response read at most (the rest is dropped). */
  maxResponseBytes: number;
  /** Abandons the attempt (the worker stopping). */
  signal?: AbortSignal;
}

export interface SendResult {
  ok: boolean;
  status: number | null;
  /**
   * What the partner reads in the delivery log: `status N`, `timeout` (connected, no answer in
   * time), `connection failed` (refused, reset, unreachable, no connection in time: closed and
   * filtered ports look alike), `TLS failed`, or why the receiver's address is refused.
   */
  error: string | null;
  /** For the server log only: the errno and the address tried. */
  detail: string | null;
  durationMs: number;
}

/**
 * The three Standard Webhooks headers for one message (`id` stays the same on every retry). Several
 * secrets (a rotation's overlap) give one signature each, space-separated: `v1,<new> v1,<old>`.
 */
export function signedHeaders(secrets: string | readonly string[], id: string, body: string, at = new Date()): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': [secrets].flat().map((secret) => new Webhook(secret).sign(id, at, body)).join(' '),
  };
}

const TLS_ERROR = /CERT|TLS|SSL|EPROTO/;

/**
 * POSTs one signed webhook. 2xx is success; anything else (including a redirect, which is never
 * followed), a timeout or a refused address is a failure to retry. Reads at most
 * `maxResponseBytes` of the answer.
 */
export async function sendWebhook(target: string, secrets: string | readonly string[], id: string, body: string, limits: SendLimits): Promise<SendResult> {
  const started = performance.now();
  const done = (ok: boolean, status: number | null, error: string | null, detail: string | null = null): SendResult =>
    ({ ok, status, error, detail, durationMs: Math.round(performance.now() - started) });
  const deadline = AbortSignal.timeout(limits.timeoutMs);
  const signal = limits.signal ? AbortSignal.any([deadline, limits.signal]) : deadline;
  const url = new URL(target);
  let addresses: ResolvedAddress[];
  try {
    addresses = await Promise.race([resolvePublicUrl(url, limits), new Promise<never>((_, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    })]);
  } catch (error) {
    return (error as Error).name === 'TimeoutError' ? done(false, null, 'timeout', 'name resolution') : done(false, null, (error as Error).message);
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let connected = false;
    const request = client.request(url, {
      method: 'POST',
      lookup: pinnedLookup(addresses),
      headers: {
        'content-type': 'application/json', 'user-agent': 'fleet-risk-graph-webhooks/1',
        'content-length': Buffer.byteLength(body), ...signedHeaders(secrets, id, body),
      },
      signal,
    }, (response) => {
      const status = response.statusCode ?? 0;
      let read = 0;
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > limits.maxResponseBytes) response.destroy();
      });
      const finish = () => resolve(status >= 200 && status < 300 ? done(true, status, null) : done(false, status, `status ${status}`));
      response.on('end', finish);
      response.on('close', finish);
      response.on('error', finish);
    });
    // A kept-alive socket comes connected already.
    request.on('socket', (socket) => {
      if (socket.connecting) socket.once('connect', () => { connected = true; });
      else connected = true;
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      const detail = `${error.code ?? error.name}: ${error.message} (${addresses[0].address})`;
      if (error.name === 'TimeoutError' || error.name === 'AbortError') return resolve(done(false, null, connected ? 'timeout' : 'connection failed', detail));
      resolve(done(false, null, connected && TLS_ERROR.test(error.code ?? '') ? 'TLS failed' : 'connection failed', detail));
    });
    request.end(body);
  });
}
