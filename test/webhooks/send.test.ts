import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { parseReceiverUrl, resolveReceiver } from '../../subgraphs/platform/webhooks/receiver-url.ts';
import { sendWebhook, signedHeaders } from '../../subgraphs/platform/webhooks/send.ts';
import { retrySchedule } from '../../subgraphs/webhooks/worker.ts';
import { newSecret } from '../../subgraphs/webhooks/service.ts';

const limits = { timeoutMs: 300, maxResponseBytes: 1024 };
let base: string;
let hits: Record<string, number>;
const server = createServer((req, res) => {
  hits[req.url ?? ''] = (hits[req.url ?? ''] ?? 0) + 1;
  if (req.url === '/redirect') return void res.writeHead(307, { location: '/ok' }).end();
  if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end(), 2_000);
  if (req.url === '/huge') return void res.writeHead(200).end('x'.repeat(1_000_000));
  res.writeHead(req.url === '/ok' ? 204 : 500).end();
});

beforeAll(async () => {
  hits = {};
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));

describe('receiver URLs', () => {
  it('accepts https anywhere public and http on loopback only', () => {
    for (const url of ['https://partner.example.com/hooks', 'http://127.0.0.1:8080/h', 'http://localhost/h', 'http://[::1]:9/h', 'https://8.8.8.8/h']) {
      expect(parseReceiverUrl(url).toString()).toBe(new URL(url).toString());
    }
  });

  it('refuses other schemes, credentials, fragments and non-public literal addresses', () => {
    for (const url of ['http://partner.example.com/h', 'ws://127.0.0.1/h', 'https://u:p@example.com/', 'https://example.com/#x', 'https://10.1.1.1/',
      'https://100.64.0.1/', 'https://169.254.169.254/', 'https://[fe80::1]/', 'https://[fc00::1]/', 'https://[::ffff:192.168.0.1]/', 'https://224.0.0.1/', 'https://0.0.0.0/']) {
      expect(() => parseReceiverUrl(url), url).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));
    }
  });

  it('resolves a name and checks every address it has', async () => {
    const addresses = await resolveReceiver(new URL('http://localhost/h'));
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.every((a) => a.address === '::1' || a.address.startsWith('127.'))).toBe(true);
    await expect(resolveReceiver(new URL('https://no-such-host.invalid/'))).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
  });
});

describe('sending', () => {
  it('signs per Standard Webhooks: a library verifies what we send', () => {
    const secret = newSecret();
    const body = JSON.stringify({ type: 'rescue.status_changed' });
    const headers = signedHeaders(secret, 'msg_1', body);
    expect(new Webhook(secret).verify(body, headers)).toEqual({ type: 'rescue.status_changed' });
    expect(() => new Webhook(secret).verify(`${body} `, headers)).toThrow();
  });

  it('treats 2xx as success and anything else as a failure', async () => {
    expect(await sendWebhook(`${base}/ok`, newSecret(), 'm', '{}', limits)).toMatchObject({ ok: true, status: 204 });
    expect(await sendWebhook(`${base}/error`, newSecret(), 'm', '{}', limits)).toMatchObject({ ok: false, status: 500 });
  });

  it('never follows a redirect', async () => {
    const before = hits['/ok'] ?? 0;
    expect(await sendWebhook(`${base}/redirect`, newSecret(), 'm', '{}', limits)).toMatchObject({ ok: false, status: 307 });
    expect(hits['/ok'] ?? 0).toBe(before);
  });

  it('gives up after the timeout and reads no more than the cap', async () => {
    const slow = await sendWebhook(`${base}/slow`, newSecret(), 'm', '{}', limits);
    expect(slow).toMatchObject({ ok: false, status: null, error: 'no answer within 300 ms' });
    expect(await sendWebhook(`${base}/huge`, newSecret(), 'm', '{}', limits)).toMatchObject({ ok: true, status: 200 });
  });

  it('refuses to connect to an address it would not accept at subscription time', async () => {
    expect(await sendWebhook('https://10.0.0.1/h', newSecret(), 'm', '{}', limits)).toMatchObject({ ok: false, status: null });
  });
});

it('retries for more than 24 hours with the defaults: 5 s x 4^n, 9 attempts', () => {
  const at = retrySchedule({ WEBHOOK_RETRY_BASE_MS: 5_000, WEBHOOK_MAX_ATTEMPTS: 9 });
  expect(at).toEqual([0, 5, 25, 105, 425, 1_705, 6_825, 27_305, 109_225]);
  expect(at.at(-1)! / 3600).toBeGreaterThan(24);
});
