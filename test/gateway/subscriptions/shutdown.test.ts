import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildServer, type ChildServer } from '../../support/child-server.ts';
import { gatewayClient } from '../../support/http.ts';
import { sseClient, wsClient } from '../../support/subscriptions.ts';

const CLIENT = { id: 'sigterm-client', secret: 'sigterm-secret-0123456789' };
let server: ChildServer;

beforeAll(async () => {
  server = await startChildServer({ BOOTSTRAP_CLIENT_ID: CLIENT.id, BOOTSTRAP_CLIENT_SECRET: CLIENT.secret, LOG_LEVEL: 'warn' });
});
afterAll(async () => { await server?.stop(); });

/** The server's gateway_subscriptions_active, over both transports. */
async function active() {
  const text = await (await fetch(`${server.base}/metrics`)).text();
  return [...text.matchAll(/^gateway_subscriptions_active\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

describe('SIGTERM', () => {
  it('closes every subscription with 1001 (SSE: a last SHUTTING_DOWN result) and exits cleanly', async () => {
    const token = await gatewayClient(() => server.base).tokenFor(CLIENT.id, CLIENT.secret);
    const ws = wsClient(server.base, `Bearer ${token}`);
    const watching = ws.subscribe('subscription { rescueUpdated(reqId: "r") { status } }');
    const sse = sseClient(server.base, `Bearer ${token}`);
    const streaming = sse.subscribe('subscription { userUpdated(userId: "u") { userId } }');
    while ((await active()) < 2) await new Promise((resolve) => setTimeout(resolve, 50));
    server.child.kill('SIGTERM');
    expect(await ws.closed).toEqual({ code: 1001, reason: 'going away: the server is shutting down' });
    await watching.ended;
    await streaming.ended;
    expect(streaming.results.at(-1)!.errors![0]!.extensions).toEqual({ code: 'SHUTTING_DOWN', closeCode: 1001 });
    expect(await server.exited).toBe(0);
    ws.dispose();
    sse.dispose();
  }, 90_000); // a whole server's shutdown (its databases closed) takes seconds, more on a loaded machine
});
