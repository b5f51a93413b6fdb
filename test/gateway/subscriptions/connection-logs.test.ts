import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startChildServer, type ChildServer } from '../../support/child-server.ts';
import { gatewayClient } from '../../support/http.ts';

const CLIENT = { id: 'ws-log-client', secret: 'ws-log-secret-0123456789' };
let server: ChildServer;

beforeAll(async () => {
  server = await startChildServer({ BOOTSTRAP_CLIENT_ID: CLIENT.id, BOOTSTRAP_CLIENT_SECRET: CLIENT.secret, LOG_LEVEL: 'info', SUBSCRIPTIONS_KEEPALIVE_MS: '300' });
});
afterAll(async () => { await server?.stop(); });

/** A raw graphql-ws socket to the server. */
function open(options: WebSocket.ClientOptions = {}) {
  const socket = new WebSocket(`${server.base.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws', options);
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  socket.on('error', () => undefined);
  return { socket, closed, opened: new Promise((resolve) => socket.on('open', resolve)) };
}

/** The server's output (stdout and stderr) since `from` characters, as lines. */
const linesSince = (from: { out: number; err: number }) =>
  [...server.stdout().slice(from.out).split('\n'), ...server.stderr().slice(from.err).split('\n')].filter((line) => line.trim());
const mark = () => ({ out: server.stdout().length, err: server.stderr().length });
const parsed = (line: string) => { try { return JSON.parse(line) as Record<string, unknown>; } catch { return { unparsable: line }; } };

describe('the WebSocket log', () => {
  it('has one JSON line, and nothing else, for an oversized message sent before connection_init', async () => {
    const from = mark();
    const { socket, closed, opened } = open();
    await opened;
    socket.send('x'.repeat(300 * 1024));
    expect(await closed).toBe(1009);
    await new Promise((r) => setTimeout(r, 500));
    const lines = linesSince(from).map(parsed);
    expect(lines.filter((l) => 'unparsable' in l)).toEqual([]);
    expect(lines.filter((l) => /websocket/i.test(String(l.msg)))).toEqual([
      expect.objectContaining({ level: 40, msg: 'WebSocket error: connection closed', error: expect.objectContaining({ type: 'RangeError', code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' }) }),
    ]);
    expect(await (await fetch(`${server.base}/metrics`)).text()).toMatch(/^gateway_subscriptions_closed_total\{reason="protocol_error"\} 1$/m);
  });

  it('logs a keep-alive timeout as one JSON line naming the client', async () => {
    const token = await gatewayClient(() => server.base).tokenFor(CLIENT.id, CLIENT.secret);
    const from = mark();
    const { socket, closed } = open({ autoPong: false });
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })));
    // Deaf only once acknowledged (and so known as its client), however long the token check takes.
    let acknowledged = false;
    socket.on('message', (data) => { acknowledged ||= JSON.parse(String(data)).type === 'connection_ack'; });
    socket.on('ping', () => { if (!acknowledged) socket.pong(); });
    expect(await closed).toBe(1006);
    await new Promise((r) => setTimeout(r, 300));
    expect(linesSince(from).map(parsed)).toContainEqual(expect.objectContaining({ level: 40, clientId: CLIENT.id, msg: 'subscription connection dropped: keep-alive timeout (no answer to a ping)' }));
    const text = await (await fetch(`${server.base}/metrics`)).text();
    expect(text).toMatch(/^gateway_subscriptions_closed_total\{reason="keepalive_timeout"\} 1$/m);
  });
});
