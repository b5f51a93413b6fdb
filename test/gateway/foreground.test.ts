import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foregroundPlugin } from '../../gateway/protection/foreground.ts';
import { SSE_PATH } from '../../gateway/subscriptions/sse.ts';
import { BACKGROUND_WAIT_MAX_MS, inBackground, turn } from '../../subgraphs/platform/lanes.ts';

/** A background turn's wait, in ms, started while `during` runs. */
async function backgroundWait(during: () => Promise<unknown>) {
  const started = performance.now();
  const waited = inBackground(() => turn()).then(() => performance.now() - started);
  await during();
  return waited;
}

describe('the foreground plugin: requests in flight hold background turns', () => {
  const app = Fastify();
  let base = '';
  const held: (() => void)[] = [];
  let arrived = () => {};
  beforeAll(async () => {
    await app.register(foregroundPlugin);
    app.get('/slow', async () => {
      arrived();
      await new Promise((r) => { setTimeout(r, 10); });
      return { ok: true };
    });
    // An SSE stream (SSE_PATH) stays open: it is not counted.
    app.get(SSE_PATH, (_request, reply) => {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream' });
      reply.raw.write(': open\n\n');
      held.push(() => reply.raw.end());
    });
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => { for (const end of held) end(); await app.close(); });

  it('counts a request from its arrival to its answer', async () => {
    const handling = new Promise<void>((resolve) => { arrived = resolve; });
    const request = fetch(`${base}/slow`).then((res) => res.json());
    await handling;
    const waited = await backgroundWait(() => request);
    // Its handler's 10 ms at least: the turn came after the answer (or the cap), not at once.
    expect(waited).toBeGreaterThanOrEqual(8);
    expect(await request).toEqual({ ok: true });
  });

  it('does not count an open SSE stream', async () => {
    const stream = await fetch(`${base}${SSE_PATH}`);
    const reader = stream.body!.getReader();
    await reader.read();
    expect(await backgroundWait(async () => undefined)).toBeLessThan(BACKGROUND_WAIT_MAX_MS - 5);
    await reader.cancel();
  });
});
