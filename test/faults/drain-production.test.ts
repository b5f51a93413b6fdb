import { expect, it } from 'vitest';
import { startChildServer } from '../support/child-server.ts';
import { TEST_HOP_KEY } from '../support/stack.ts';

/**
 * SIGTERM with NODE_ENV=production, as the image and compose run: Apollo Server's own signal
 * handler (on outside NODE_ENV=test) re-sent the signal once its HTTP server had closed, killing the
 * process before our shutdown had closed the database and flushed the traces.
 */
it('runs the whole shutdown and exits 0 under NODE_ENV=production', async () => {
  // The image's default: every subgraph in the gateway's process, on the embedded database.
  const server = await startChildServer({ NODE_ENV: 'production', INTERNAL_HOP_KEY: TEST_HOP_KEY });
  try {
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
    const signal = new Promise<NodeJS.Signals | null>((resolve) => server.child.once('exit', (_code, sig) => resolve(sig)));
    const sent = performance.now();
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    console.log(`shutdown under NODE_ENV=production: ${((performance.now() - sent) / 1000).toFixed(1)} s`);
    expect(await signal).toBeNull();
    expect(server.stdout()).toContain('draining and shutting down');
  } finally {
    await server.stop();
  }
}, 300_000);
