import { describe, expect, it } from 'vitest';
import { Counter, Registry } from 'prom-client';
import type { WebSocket } from 'ws';
import { ExecutionSlots } from '../../../gateway/subscriptions/execution-slots.ts';
import { Connection } from '../../../gateway/subscriptions/ws-connection.ts';

const busyFor = (ms: number) => { const until = performance.now() + ms; while (performance.now() < until) { /* the event loop held */ } };

describe('subscription executions paced (ExecutionSlots with a share)', () => {
  it('rests after an execution as long as the event loop was busy while it ran, so other work gets the loop between', async () => {
    const slots = new ExecutionSlots(2, true, 0.5);
    const starts: number[] = [];
    const run = () => slots.run(async () => { starts.push(performance.now()); busyFor(40); });
    await run();
    let ticks = 0;
    const ticker = setInterval(() => { ticks += 1; }, 1);
    await run();
    clearInterval(ticker);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(75);
    // Timers ran during the rest, not only after the second execution.
    expect(ticks).toBeGreaterThan(3);
  });

  it('owes no rest for time spent waiting (a database round trip), nor without a share', async () => {
    for (const slots of [new ExecutionSlots(2, true, 0.5), new ExecutionSlots(2)]) {
      const started = performance.now();
      await slots.run(() => new Promise((resolve) => { setTimeout(resolve, 40); }));
      await slots.run(async () => undefined);
      expect(performance.now() - started).toBeLessThan(70);
    }
  });
});

describe('a pre-serialised result on a WebSocket (Connection.placeholder / frame)', () => {
  const connection = () => new Connection({} as WebSocket, new Counter({ name: 'closed', help: 'closed', labelNames: ['reason'], registers: [new Registry()] }));

  it("sends graphql-ws's message with the result's JSON, serialised once for every connection it goes to", () => {
    const result = { data: { rescueUpdated: { status: 'EN_ROUTE', note: 'a "quoted" \u0000 value' } }, extensions: { event: { id: 'e1' } } };
    const [a, b] = [connection(), connection()];
    for (const [c, id] of [[a, 'sub-"1"'], [b, '2']] as const) {
      const message = JSON.stringify({ id, type: 'next', payload: c.placeholder(result) });
      expect(c.frame(message)).toBe(JSON.stringify({ id, type: 'next', payload: result }));
    }
    const stale = { ...result, data: null };
    const message = JSON.stringify({ id: '3', type: 'next', payload: a.placeholder(stale) });
    (stale as { data: unknown }).data = { changed: true };
    // Serialised when handed over: a later change is not sent.
    expect(JSON.parse(a.frame(message)).payload.data).toBeNull();
  });

  it('leaves every other message as it is', () => {
    const c = connection();
    for (const message of ['{"type":"connection_ack"}', JSON.stringify({ id: '1', type: 'next', payload: { data: { x: '\u0000pre-serialised:0' } } })]) {
      expect(c.frame(message)).toBe(message);
    }
  });
});
