import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runner } from '../../../subgraphs/platform/db/run.ts';
import { pruneHistory } from '../../../subgraphs/webhooks/history.ts';
import { startTestStack, type TestStack } from '../../support/stack.ts';
import { openHistoryReader } from '../../../gateway/subscriptions/history-access.ts';
import { multipartClient, sseClient, subscriptionsActive, wsClient } from '../../support/subscriptions.ts';
import type { Received } from '../../support/subscriptions.ts';
import { bookedRescue as bookedRescueOn, updateRescue } from '../../support/rescues.ts';

let t: TestStack;

// The webhooks area keeps the history; on disk, so that a restart keeps it (PGlite) as PostgreSQL does.
beforeAll(async () => {
  t = await startTestStack({ subgraphs: ['roadside', 'webhooks'], persistent: true });
});
afterAll(async () => { await t?.close(); });

const RESCUE = `subscription($id: ID!, $after: ID) {
  rescueUpdated(reqId: $id, after: $after) { reqId status }
}`;
const bookedRescue = (token = t.token) => bookedRescueOn(t, token);
const update = (reqId: string, status: string, token = t.token) => updateRescue(t, reqId, status, token);
const history = () => runner(t.stack.subgraphs.find((s) => s.name === 'webhooks')!.db);
interface EventExtension { id: string; type: string; occurredAt: string }
const eventOf = (result: Received) => (result as { extensions?: { event?: EventExtension } })
  .extensions?.event;

/** The rescue's event ids as the history holds them, in commit order. */
async function recorded(reqId: string) {
  const rows = await history()('select id from "webhooks"."events" where resource_key = ? order by seq',
    [`rescue:${reqId}`]);
  return rows.map((row) => String(row.id));
}

/** The events of `reqId` once the history holds `count` of them. */
async function recordedCount(reqId: string, count: number) {
  for (let i = 0; i < 100; i += 1) {
    const ids = await recorded(reqId);
    if (ids.length >= count) return ids;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the history never held ${count} events of ${reqId}`);
}

/** A rescue with one event seen live by a graphql-ws subscriber, and two more committed after it left. */
async function missedTwo(token = t.token) {
  const reqId = await bookedRescue(token);
  const ws = wsClient(t.url, `Bearer ${token}`);
  const first = ws.subscribe(RESCUE, { id: reqId });
  await subscriptionsActive(t.stack.gateway, 1);
  await update(reqId, 'EN_ROUTE', token);
  const seen = eventOf(await first.nth(1))!;
  ws.dispose();
  await subscriptionsActive(t.stack.gateway, 0);
  await update(reqId, 'APPROACHING', token);
  await update(reqId, 'ARRIVED_ONSITE', token);
  return { reqId, seen };
}

/** The `id:` and data of each message of a raw `text/event-stream` body, until `count` `next` ones came. */
async function sseMessages(response: Response, count: number) {
  const messages: { id?: string; event: string; data: Received }[] = [];
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  while (messages.filter((m) => m.event === 'next').length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const lines = buffer.slice(0, end).split('\n');
      buffer = buffer.slice(end + 2);
      const field = (name: string) => lines.find((l) => l.startsWith(`${name}:`))
        ?.slice(name.length + 1).trim();
      const event = field('event');
      const data = JSON.parse(field('data') || 'null') as Received;
      if (event) messages.push({ id: field('id'), event, data });
    }
  }
  await reader.cancel();
  return messages;
}

/** A raw GET of a distinct-connections graphql-sse stream, as an EventSource would reconnect it. */
type Headers = Record<string, string>;
type Vars = Record<string, unknown>;
const sseGet = (query: string, variables: Vars, headers: Headers = {}, token = t.token) => {
  const params = new URLSearchParams({ query, variables: JSON.stringify(variables) });
  const authorization = `Bearer ${token}`;
  const accept = 'text/event-stream';
  return fetch(`${t.url}/graphql/stream?${params}`, { headers: { accept, authorization, ...headers } });
};

describe('replay after an event', () => {
  it('over graphql-ws: each result names its event; resuming after one replays those missed', async () => {
    const { reqId, seen } = await missedTwo();
    const uuid = expect.stringMatching(/^[0-9a-f-]{36}$/);
    expect(seen).toMatchObject({ type: 'rescue.status_changed', id: uuid });
    expect(Date.parse(seen.occurredAt)).toBeGreaterThan(Date.now() - 60_000);
    const ids = await recordedCount(reqId, 3);
    expect(ids[0]).toBe(seen.id);

    const ws = wsClient(t.url, `Bearer ${t.token}`);
    const resumed = ws.subscribe(RESCUE, { id: reqId, after: seen.id });
    await resumed.nth(2);
    await update(reqId, 'COMPLETED');
    await resumed.nth(3);
    const all = await recordedCount(reqId, 4);
    expect(resumed.results.map((r) => eventOf(r)!.id)).toEqual(all.slice(1));
    // Replayed results run the query when replayed: the rescue as it is now.
    expect(resumed.results[0]!.data.rescueUpdated).toEqual({ reqId, status: 'ARRIVED_ONSITE' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(resumed.results).toHaveLength(3);
    ws.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });

  it('none twice at the boundary: events committed as the replay starts come once, in order', async () => {
    const { reqId, seen } = await missedTwo();
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    const resumed = ws.subscribe(RESCUE, { id: reqId, after: seen.id });
    // Committed while the subscription starts: some are in the history read, some arrive live, some both.
    await Promise.all([update(reqId, 'COMPLETED'), resumed.nth(1)]);
    const all = await recordedCount(reqId, 4);
    await resumed.nth(3);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(resumed.results.map((r) => eventOf(r)!.id)).toEqual(all.slice(1));
    ws.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });

  it('over SSE: each message has its event id as `id:`; Last-Event-ID on a reconnect resumes', async () => {
    const reqId = await bookedRescue();
    const query = 'subscription($id: ID!) { rescueUpdated(reqId: $id) { status } }';
    const first = await sseGet(query, { id: reqId });
    expect(first.status).toBe(200);
    const reading = sseMessages(first, 1);
    await subscriptionsActive(t.stack.gateway, 1);
    await update(reqId, 'EN_ROUTE');
    const [message] = await reading;
    expect(message!.id).toBe(eventOf(message!.data)!.id);
    await subscriptionsActive(t.stack.gateway, 0);
    await update(reqId, 'APPROACHING');
    await update(reqId, 'ARRIVED_ONSITE');

    const again = await sseGet(query, { id: reqId }, { 'last-event-id': message!.id! });
    expect(again.status).toBe(200);
    const replayed = await sseMessages(again, 2);
    const ids = await recordedCount(reqId, 3);
    expect(replayed.map((m) => m.id)).toEqual(ids.slice(1));
    const statuses = replayed.map((m) => m.data.data.rescueUpdated.status);
    expect(statuses).toEqual(['ARRIVED_ONSITE', 'ARRIVED_ONSITE']);
  });

  it("graphql-sse's own client and HTTP multipart resume with `after` too", async () => {
    const { reqId, seen } = await missedTwo();
    const ids = await recordedCount(reqId, 3);
    const sse = sseClient(t.url, `Bearer ${t.token}`);
    const viaSse = sse.subscribe(RESCUE, { id: reqId, after: seen.id });
    const multipart = multipartClient(t.url, `Bearer ${t.token}`);
    const viaMultipart = multipart.subscribe(RESCUE, { id: reqId, after: seen.id });
    await Promise.all([viaSse.nth(2), viaMultipart.nth(2)]);
    expect(viaSse.results.map((r) => eventOf(r)!.id)).toEqual(ids.slice(1));
    expect(viaMultipart.results.map((r) => eventOf(r)!.id)).toEqual(ids.slice(1));
    sse.dispose();
    viaMultipart.dispose();
    await subscriptionsActive(t.stack.gateway, 0);
  });
});

describe('an `after` the history does not hold for the caller', () => {
  /** The refusal of `after` on the three transports: graphql-ws's error, SSE's and multipart's answers. */
  async function refusals(reqId: string, after: string, token = t.token) {
    const ws = wsClient(t.url, `Bearer ${token}`);
    const overWs = await ws.subscribe(RESCUE, { id: reqId, after }).ended as Received['errors'];
    ws.dispose();
    const overSse = await sseGet(RESCUE, { id: reqId, after }, {}, token);
    const multipart = multipartClient(t.url, `Bearer ${token}`);
    await multipart.subscribe(RESCUE, { id: reqId, after }).ended;
    const sseBody = await overSse.json() as Received;
    expect(overSse.status).toBe(410);
    expect(multipart.refused[0]!.status).toBe(410);
    const all = [overWs![0]!, sseBody.errors![0]!, (multipart.refused[0]!.body as Received).errors![0]!];
    for (const error of all) expect(error).toEqual(all[0]);
    expect(all[0]!.extensions).toMatchObject({ code: 'EVENT_HISTORY_UNAVAILABLE', after });
    return all[0]!;
  }

  it('unknown, malformed or another organisation\'s: one answer, naming no event', async () => {
    const { reqId } = await missedTwo();
    const other = await t.clientFor('org-replay-other');
    const theirs = await missedTwo(other.token);
    const [theirEvent] = await recordedCount(theirs.reqId, 3);
    const answers = [
      await refusals(reqId, randomUUID()),
      await refusals(reqId, 'not-an-event-id'),
      await refusals(reqId, theirEvent!),
    ];
    for (const answer of answers) {
      expect(Object.keys(answer.extensions!).sort()).toEqual(['after', 'code']);
      expect(answer.message.replace(/'[^']*'/, 'X')).toBe(answers[0]!.message.replace(/'[^']*'/, 'X'));
    }
  });

  it("another entity's event of the caller's organisation: the same, naming the oldest held", async () => {
    const { reqId } = await missedTwo();
    const elsewhere = await missedTwo();
    const answer = await refusals(reqId, elsewhere.seen.id);
    expect(answer.extensions!.oldestEventId).toBe((await recorded(reqId))[0]);
  });

  it('older than the history (pruned): refused; after a restart, the history held is replayed', async () => {
    const { reqId, seen } = await missedTwo();
    const [, second, third] = await recordedCount(reqId, 3);
    const expired = 'update "webhooks"."events" set occurred_at = now() - interval \'40 days\' where id = ?';
    await history()(expired, [seen.id]);
    await pruneHistory(history(), t.config.EVENTS_HISTORY_DAYS);
    // This process still remembers the events it had live: a restart forgets them, the history on disk stays.
    await t.restart();
    const answer = await refusals(reqId, seen.id);
    expect(answer.message).toContain(seen.id);
    const ws = wsClient(t.url, `Bearer ${t.token}`);
    const resumed = ws.subscribe(RESCUE, { id: reqId, after: second });
    expect(eventOf(await resumed.nth(1))!.id).toBe(third);
    await update(reqId, 'COMPLETED');
    expect(eventOf(await resumed.nth(2))!.id).toBe((await recordedCount(reqId, 3))[2]);
    expect(resumed.results).toHaveLength(2);
    ws.dispose();
  }, 120_000);
});

describe('a gateway whose webhooks area runs elsewhere', () => {
  it.skipIf(!process.env.DATABASE_URL)("reads the same history on that area's database", async () => {
    const { reqId, seen } = await missedTwo();
    const ids = await recordedCount(reqId, 3);
    const remote = openHistoryReader(t.config, {})!;
    try {
      const found = await remote.reader.find(t.org, seen.id);
      expect(found).toMatchObject({ eventId: seen.id, resourceKey: `rescue:${reqId}` });
      expect(await remote.reader.find('org-replay-other', seen.id)).toBeUndefined();
      const after = await remote.reader.after({
        orgId: t.org, resourceKey: `rescue:${reqId}`, seq: 0, types: ['rescue.status_changed'], limit: 10,
      });
      expect(after.map((e) => e.eventId)).toEqual(ids);
    } finally {
      await remote.close();
    }
  });
});
