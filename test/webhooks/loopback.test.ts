import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.ts';

let t: TestStack;

// The default configuration: no WEBHOOK_ALLOW_LOOPBACK.
beforeAll(async () => { t = await startTestStack({ subgraphs: ['webhooks'] }); }, 300_000);
afterAll(async () => { await t?.close(); });

it('refuses loopback receivers, however spelled, and IPv4-compatible IPv6 in the default configuration', async () => {
  expect(t.config.WEBHOOK_ALLOW_LOOPBACK).toBe(false);
  for (const url of ['http://127.0.0.1:5432/', 'http://[::ffff:127.0.0.1]:6379/', 'http://2130706433:4000/metrics', 'https://[::a9fe:a9fe]/',
    'https://127.0.0.1/', 'http://localhost:4000/', 'https://localhost/', 'https://[::1]/']) {
    const res = await t.request('POST', '/platform/webhooks/v1/subscriptions', { token: t.token, body: { url, eventTypes: ['mvr.created'] } });
    expect(res.status, url).toBe(400);
    expect(res.headers.get('content-type'), url).toMatch(/problem\+json/);
  }
  const gql = await t.graphql('mutation { createWebhookSubscription(input: { url: "http://127.0.0.1:5432/", eventTypes: [MVR_CREATED] }) { secret } }');
  expect(gql.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');
  expect((await t.request('GET', '/platform/webhooks/v1/subscriptions', { token: t.token })).body.subscriptions).toEqual([]);
});
