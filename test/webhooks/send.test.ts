import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { parsePublicUrl, resolvePublicUrl } from '../../subgraphs/platform/public-address.ts';
import { sendWebhook, signedHeaders } from '../../subgraphs/webhooks/send.ts';
import { retrySchedule } from '../../subgraphs/webhooks/deliver.ts';
import { newSecret } from '../../subgraphs/webhooks/service.ts';

const LOOPBACK = { allowLoopback: true };
const DEFAULT = { allowLoopback: false };
const limits = { timeoutMs: 300, maxResponseBytes: 1024, ...LOOPBACK };
let base: string;
let hits: Record<string, number>;
const server = createServer((req, res) => {
  hits[req.url ?? ''] = (hits[req.url ?? ''] ?? 0) + 1;
  if (req.url === '/redirect') return void res.writeHead(307, { location: '/ok' }).end();
  if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end(), 2_000);
  if (req.url === '/huge') return void res.writeHead(200).end('x'.repeat(1_000_000));
  if (req.url === '/hang-up') return void req.socket.destroy();
  res.writeHead(req.url === '/ok' ? 204 : 500).end();
});

beforeAll(async () => {
  hits = {};
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));

const refuses = (url: string, policy = DEFAULT) => expect(() => parsePublicUrl(url, policy), url).toThrow(expect.objectContaining({ code: 'BAD_USER_INPUT' }));

describe('receiver URLs', () => {
  it('accepts https anywhere public, and http on loopback only when loopback is allowed', () => {
    for (const url of ['https://partner.example.com/hooks', 'https://8.8.8.8/h', 'https://[2606:4700::1111]/h']) {
      expect(parsePublicUrl(url, DEFAULT).toString()).toBe(new URL(url).toString());
    }
    for (const url of ['http://127.0.0.1:8080/h', 'http://localhost/h', 'http://[::1]:9/h', 'http://[::ffff:127.0.0.1]:6379/']) {
      expect(parsePublicUrl(url, LOOPBACK).toString()).toBe(new URL(url).toString());
    }
  });

  it('refuses loopback in the default configuration, however it is spelled', () => {
    for (const url of ['http://127.0.0.1:5432/', 'https://127.0.0.1/', 'http://[::ffff:127.0.0.1]:6379/', 'http://2130706433:4000/metrics', 'http://0x7f.1/',
      'http://017700000001/', 'http://localhost/h', 'https://localhost/h', 'http://[::1]:9/h', 'https://[::1]/']) refuses(url);
  });

  it('refuses other schemes, credentials, fragments and non-public literal addresses', () => {
    for (const url of ['http://partner.example.com/h', 'ws://127.0.0.1/h', 'https://u:p@example.com/', 'https://example.com/#x', 'https://10.1.1.1/',
      'https://100.64.0.1/', 'https://169.254.169.254/', 'https://[fe80::1]/', 'https://[fc00::1]/', 'https://[::ffff:192.168.0.1]/', 'https://224.0.0.1/', 'https://0.0.0.0/']) {
      refuses(url, LOOPBACK);
    }
  });

  it('refuses IPv4-compatible, NAT64, 6to4 and Teredo forms, loopback allowed or not', () => {
    for (const url of ['https://[::a9fe:a9fe]/', 'https://[::7f00:1]/', 'https://[::808:808]/', 'https://[64:ff9b::a9fe:a9fe]/', 'https://[2002:a9fe:a9fe::]/',
      'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/']) {
      refuses(url, DEFAULT);
      refuses(url, LOOPBACK);
    }
  });

  it('resolves a name and checks every address it has', async () => {
    const addresses = await resolvePublicUrl(new URL('http://localhost/h'), LOOPBACK);
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.every((a) => a.address === '::1' || a.address.startsWith('127.'))).toBe(true);
    await expect(resolvePublicUrl(new URL('https://localhost/h'), DEFAULT)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
    await expect(resolvePublicUrl(new URL('https://no-such-host.invalid/'), LOOPBACK)).rejects.toMatchObject({ code: 'BAD_USER_INPUT' });
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
    expect(await sendWebhook(`${base}/error`, newSecret(), 'm', '{}', limits)).toMatchObject({ ok: false, status: 500, error: 'status 500' });
  });

  it('never follows a redirect', async () => {
    const before = hits['/ok'] ?? 0;
    expect(await sendWebhook(`${base}/redirect`, newSecret(), 'm', '{}', limits)).toMatchObject({ ok: false, status: 307 });
    expect(hits['/ok'] ?? 0).toBe(before);
  });

  it('gives up after the timeout and reads no more than the cap', async () => {
    const slow = await sendWebhook(`${base}/slow`, newSecret(), 'm', '{}', limits);
    expect(slow).toMatchObject({ ok: false, status: null, error: 'timeout' });
    expect(await sendWebhook(`${base}/huge`, newSecret(), 'm', '{}', limits)).toMatchObject({ ok: true, status: 200 });
  });

  it('refuses to connect to an address it would not accept at subscription time', async () => {
    expect(await sendWebhook('https://10.0.0.1/h', newSecret(), 'm', '{}', limits)).toMatchObject({ ok: false, status: null });
    const before = hits['/ok'] ?? 0;
    expect(await sendWebhook(`${base}/ok`, newSecret(), 'm', '{}', { ...limits, ...DEFAULT })).toMatchObject({ ok: false, status: null });
    expect(hits['/ok'] ?? 0).toBe(before);
  });

  it('tells the partner "connection failed" alike for a closed port and a hang-up, and keeps the detail apart', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const refused = await sendWebhook(`http://127.0.0.1:${port}/h`, newSecret(), 'm', '{}', limits);
    const hungUp = await sendWebhook(`${base}/hang-up`, newSecret(), 'm', '{}', limits);
    expect(refused).toMatchObject({ ok: false, status: null, error: 'connection failed' });
    expect(hungUp).toMatchObject({ ok: false, status: null, error: 'connection failed' });
    expect(refused.detail).toMatch(/ECONNREFUSED/);
    expect(hungUp.detail).not.toBe(refused.detail);
  });
});

it('retries for more than 24 hours with the defaults: 5 s x 4^n, 9 attempts', () => {
  const at = retrySchedule({ WEBHOOK_RETRY_BASE_MS: 5_000, WEBHOOK_MAX_ATTEMPTS: 9 });
  expect(at).toEqual([0, 5, 25, 105, 425, 1_705, 6_825, 27_305, 109_225]);
  expect(at.at(-1)! / 3600).toBeGreaterThan(24);
});
