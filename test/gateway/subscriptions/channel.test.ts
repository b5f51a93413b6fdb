import { describe, expect, it } from 'vitest';
import { Channel } from '../../../gateway/subscriptions/channel.ts';

describe('a subscription channel', () => {
  it('is pulled item by item, and ends after what was pushed', async () => {
    let ended = 0;
    const channel = new Channel<number>(() => { ended += 1; });
    channel.push(1);
    expect(await channel.next()).toEqual({ value: 1, done: false });
    const waiting = channel.next();
    channel.push(2);
    expect(await waiting).toEqual({ value: 2, done: false });
    channel.end(3);
    expect(ended).toBe(1);
    expect(await channel.next()).toEqual({ value: 3, done: false });
    expect(await channel.next()).toEqual({ value: undefined, done: true });
  });

  it('hands items to its sink once pulled: those waiting first, in order, then each as pushed; the pull waits for the end', async () => {
    let ended = 0;
    const channel = new Channel<number>(() => { ended += 1; });
    const sent: number[] = [];
    channel.sendTo((n) => sent.push(n));
    channel.push(1);
    channel.push(2);
    expect(sent).toEqual([]);
    expect(channel.backlog).toBe(2);
    let done = false;
    const pulled = channel.next().then((result) => { done = true; return result; });
    expect(sent).toEqual([1, 2]);
    channel.push(3);
    expect(sent).toEqual([1, 2, 3]);
    expect(channel.backlog).toBe(0);
    await Promise.resolve();
    expect(done).toBe(false);
    channel.end(4);
    expect(sent).toEqual([1, 2, 3, 4]);
    expect(await pulled).toEqual({ value: undefined, done: true });
    expect(ended).toBe(1);
    channel.push(5);
    expect(sent).toEqual([1, 2, 3, 4]);
  });

  it('sends nothing more once returned (the client completed, the connection closed)', async () => {
    const channel = new Channel<number>(() => undefined);
    const sent: number[] = [];
    channel.sendTo((n) => sent.push(n));
    const pulled = channel.next();
    channel.push(1);
    expect(await channel.return()).toEqual({ value: undefined, done: true });
    expect(await pulled).toEqual({ value: undefined, done: true });
    channel.push(2);
    expect(sent).toEqual([1]);
    expect(channel.closed).toBe(true);
  });
});
