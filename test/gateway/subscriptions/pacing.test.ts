import { describe, expect, it } from 'vitest';
import { ExecutionSlots } from '../../../gateway/subscriptions/execution-slots.ts';
import { PreSerialised } from '../../../gateway/subscriptions/pre-serialised.ts';

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

describe('a pre-serialised result (PreSerialised.placeholder / fill)', () => {
  it("writes the transport's message with the result's JSON, serialised once for every connection it goes to", () => {
    const result = { data: { rescueUpdated: { status: 'EN_ROUTE', note: 'a "quoted" \u0000 value' } }, extensions: { event: { id: 'e1' } } };
    const [a, b, c] = [new PreSerialised(), new PreSerialised(), new PreSerialised()];
    for (const [p, id] of [[a, 'sub-"1"'], [b, '2']] as const) {
      const message = JSON.stringify({ id, type: 'next', payload: p.placeholder(result) });
      expect(p.fill(message)).toBe(JSON.stringify({ id, type: 'next', payload: result }));
    }
    // graphql-sse's event of a stream per subscription: the result is the whole data.
    expect(c.fill(`event: next\ndata: ${JSON.stringify(c.placeholder(result))}\n\n`)).toBe(`event: next\ndata: ${JSON.stringify(result)}\n\n`);
    const stale = { ...result, data: null };
    const message = JSON.stringify({ id: '3', type: 'next', payload: a.placeholder(stale) });
    (stale as { data: unknown }).data = { changed: true };
    // Serialised when handed over: a later change is not sent.
    expect(JSON.parse(a.fill(message)).payload.data).toBeNull();
  });

  it('leaves every other message as it is, a value that looks like a placeholder inside a result included', () => {
    const p = new PreSerialised();
    p.placeholder({ data: null });
    for (const message of ['{"type":"connection_ack"}', JSON.stringify({ id: '1', type: 'next', payload: { data: { x: '\u0000pre-serialised:0' } } })]) {
      expect(p.fill(message)).toBe(message);
    }
  });
});
