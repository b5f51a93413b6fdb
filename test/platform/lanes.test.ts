import { describe, expect, it } from 'vitest';
import { BACKGROUND_WAIT_MAX_MS, inBackground, requestStarted, turn } from '../../subgraphs/platform/lanes.ts';

const sleep = (ms: number) => new Promise((r) => { setTimeout(r, ms); });

describe('lanes: background work gives way to the requests in flight', () => {
  it('a background turn waits until the request in flight ends; a foreground turn does not', async () => {
    const ended = requestStarted();
    const order: string[] = [];
    const waited = inBackground(async () => { await turn(); order.push('background'); });
    await turn();
    order.push('foreground');
    await sleep(5);
    order.push('request ended');
    ended();
    await waited;
    expect(order).toEqual(['foreground', 'request ended', 'background']);
  });

  it('waits at most BACKGROUND_WAIT_MAX_MS for a request that does not end, and takes a plain turn with none in flight', async () => {
    const ended = requestStarted();
    try {
      const started = performance.now();
      await inBackground(() => turn());
      expect(performance.now() - started).toBeGreaterThanOrEqual(BACKGROUND_WAIT_MAX_MS - 2);
    } finally {
      ended();
      ended();
    }
    // Ended twice counts once: nothing is in flight now.
    const started = performance.now();
    await inBackground(() => turn());
    expect(performance.now() - started).toBeLessThan(BACKGROUND_WAIT_MAX_MS - 5);
  });

  it('resumes one background piece per loop iteration: what was queued meanwhile runs in between', async () => {
    const order: string[] = [];
    const pieces = ['A', 'B'].map((name) => inBackground(async () => { await turn(); order.push(name); }));
    setImmediate(() => order.push('foreground'));
    await Promise.all(pieces);
    expect(order).toEqual(['A', 'foreground', 'B']);
  });
});
