/**
 * Subscriptions over HTTP multipart (Apollo's protocol, POST /graphql), read with meros and with
 * Apollo Client 4's HttpLink as a frontend without a WebSocket link sends them.
 */
import { ApolloClient, HttpLink, InMemoryCache, gql as tag } from '@apollo/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_CLIENTS_PATH } from '../../../gateway/admin/clients-routes.ts';
import { MULTIPART_HEARTBEAT_MS } from '../../../gateway/subscriptions/multipart.ts';
import { bookedRescue as bookedRescueOn, updateRescue } from '../../support/rescues.ts';
import { adminToken, startTestStack, type TestStack } from '../../support/stack.ts';
import { MULTIPART_ACCEPT, multipartClient, subscriptionsActive } from '../../support/subscriptions.ts';

let t: TestStack;

beforeAll(async () => { t = await startTestStack({ subgraphs: ['roadside'] }); });
afterAll(async () => { await t?.close(); });

const RESCUE = 'subscription Track($id: ID!) { rescueUpdated(reqId: $id) { reqId status } }';
const STATUSES = ['EN_ROUTE', 'APPROACHING', 'ARRIVED_ONSITE', 'COMPLETED'];

describe('multipart subscriptions on POST /graphql', () => {
  it('push every status of a rescue in order as `payload` parts, with a heartbeat part while quiet', async () => {
    const reqId = await bookedRescueOn(t);
    const client = multipartClient(t.url, `Bearer ${t.token}`);
    const watching = client.subscribe(RESCUE, { id: reqId });
    await subscriptionsActive(t.stack.gateway, 1);
    for (const [i, status] of STATUSES.entries()) {
      await updateRescue(t, reqId, status);
      expect((await watching.nth(i + 1)).data.rescueUpdated).toEqual({ reqId, status });
    }
    await expect.poll(() => client.heartbeats.length, { timeout: MULTIPART_HEARTBEAT_MS * 2 }).toBeGreaterThan(0);
    expect(watching.results.every((r) => r.errors === undefined)).toBe(true);
    watching.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  }, 30_000);

  it('answer with the multipart type and no caching, and keep JSON for a query sent with the same Accept', async () => {
    const reqId = await bookedRescueOn(t);
    const abort = new AbortController();
    const res = await fetch(`${t.url}/graphql`, {
      method: 'POST', signal: abort.signal, body: JSON.stringify({ query: RESCUE, variables: { id: reqId } }),
      headers: { 'content-type': 'application/json', accept: MULTIPART_ACCEPT, authorization: `Bearer ${t.token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('multipart/mixed;boundary="graphql";subscriptionSpec=1.0');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('vary')).toMatch(/\bAccept\b/);
    abort.abort();
    const query = await t.request('POST', '/graphql', { token: t.token, headers: { accept: MULTIPART_ACCEPT }, body: { query: `{ rescue(reqId: "${reqId}") { status } }` } });
    expect(query.status).toBe(200);
    expect(query.body).toEqual({ data: { rescue: { status: 'BOOKED' } } });
  });

  it('refuse before the stream starts, as JSON with the status of the error', async () => {
    const refusedWith = async (authorization: string | undefined, query: string) => {
      const client = multipartClient(t.url, authorization);
      await client.subscribe(query, { id: 'r-1' }).ended;
      return client.refused[0]!;
    };
    const anonymous = await refusedWith(undefined, RESCUE);
    expect(anonymous.status).toBe(401);
    const invalid = await refusedWith(`Bearer ${t.token}`, 'subscription { rescueUpdated(reqId: "r-1") { nope } }');
    expect(invalid).toMatchObject({ status: 400, body: { errors: [{ extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] } });
    const tooLong = await refusedWith(`Bearer ${t.token}`, `subscription { rescueUpdated(reqId: "${'x'.repeat(300)}") { status } }`);
    expect(tooLong).toMatchObject({ status: 400, body: { errors: [{ extensions: { code: 'BAD_USER_INPUT' } }] } });
  });

  it('refuse a subscription sent without the multipart Accept with 400 naming every transport', async () => {
    const res = await t.request('POST', '/graphql', { token: t.token, body: { query: RESCUE, variables: { id: 'r-1' } } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/graphql-ws.*graphql-sse.*multipart\/mixed;subscriptionSpec=1\.0/);
  });

  it('end with `{ payload: null, errors }` carrying the close code when the client is disabled', async () => {
    const other = await t.clientFor('org-multipart-disabled');
    const reqId = await bookedRescueOn(t, other.token);
    const watching = multipartClient(t.url, `Bearer ${other.token}`).subscribe(RESCUE, { id: reqId });
    await subscriptionsActive(t.stack.gateway, 1);
    expect((await t.request('POST', `${ADMIN_CLIENTS_PATH}/${other.clientId}/disable`, { token: await adminToken(t) })).status).toBe(200);
    const errors = await watching.ended as { extensions: Record<string, unknown> }[];
    expect(errors[0]!.extensions).toEqual({ code: 'UNAUTHENTICATED', closeCode: 4401 });
    await subscriptionsActive(t.stack.gateway, 0);
  });

  it("work with Apollo Client 4's HttpLink and no WebSocket link", async () => {
    const reqId = await bookedRescueOn(t);
    const client = new ApolloClient({
      link: new HttpLink({ uri: `${t.url}/graphql`, headers: { authorization: `Bearer ${t.token}` } }),
      cache: new InMemoryCache(),
    });
    const seen: string[] = [];
    const subscription = client.subscribe({ query: tag(RESCUE), variables: { id: reqId } }).subscribe({
      next: ({ data }) => { seen.push((data as { rescueUpdated: { status: string } }).rescueUpdated.status); },
    });
    await subscriptionsActive(t.stack.gateway, 1);
    for (const [i, status] of STATUSES.entries()) {
      await updateRescue(t, reqId, status);
      await expect.poll(() => seen.length).toBe(i + 1);
    }
    expect(seen).toEqual(STATUSES);
    subscription.unsubscribe();
    await subscriptionsActive(t.stack.gateway, 0);
    client.stop();
  });
});
