/**
 * `npx node test/bench/ws-idle.ts [-- --connections=400] [--clients=1] [--idle=10]`
 *
 * Idle WebSocket connections (issue 34): `connections` graphql-ws connections, acknowledged and
 * holding no subscription, spread evenly over `clients` API clients (the operator's client and
 * others created through the admin API), to a gateway child process started as `npm start` would
 * (embedded PGlite). Prints how many were acknowledged and how many the gateway closed (code and
 * reason), the gateway's RSS and heap used (after a full collection) before and after opening them,
 * and its CPU over `idle` seconds holding them. Any environment the run is given (e.g.
 * SUBSCRIPTIONS_MAX_CONNECTIONS_PER_CLIENT) is passed on to the gateway.
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { freePort, startChildServer } from '../support/child-server.ts';
import { gatewayClient } from '../support/http.ts';
import { flag } from './args.ts';
import { SERVER_ENV } from './protocol.ts';
import { collectGarbage, processFigures } from './process-figures.ts';

const CONNECTIONS = Math.round(flag('connections', 400, 5000));
const CLIENTS = Math.round(flag('clients', 1, 200));
const IDLE_MS = flag('idle', 10, 120) * 1000;
const OPERATOR = { id: 'bench-operator', secret: 'bench-operator-secret-0123456789' };

interface Outcome { acknowledged: boolean; closed?: { code: number; reason: string } }

/** One graphql-ws connection (the `graphql-transport-ws` subprotocol) that sends connection_init and then nothing. */
function connect(base: string, token: string): Promise<{ socket: WebSocket; outcome: Outcome }> {
  const outcome: Outcome = { acknowledged: false };
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/graphql`, 'graphql-transport-ws');
  return new Promise((resolve) => {
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: { authorization: `Bearer ${token}` } })));
    socket.on('message', (data) => {
      if (JSON.parse(String(data)).type === 'connection_ack') {
        outcome.acknowledged = true;
        resolve({ socket, outcome });
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', (code, reason) => {
      outcome.closed = { code, reason: String(reason) };
      resolve({ socket, outcome });
    });
  });
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const settle = () => new Promise((r) => setTimeout(r, 2_000));

const inspectPort = await freePort();
const server = await startChildServer({
  ...SERVER_ENV, LOG_LEVEL: 'error', BOOTSTRAP_CLIENT_ID: OPERATOR.id, BOOTSTRAP_CLIENT_SECRET: OPERATOR.secret, BOOTSTRAP_ORG: 'org-bench',
  RATE_LIMIT_PER_MINUTE: '100000000', TOKEN_RATE_LIMIT_PER_MINUTE: '1000000', TOKEN_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000',
  MVR_ENCRYPTION_KEY: randomBytes(32).toString('base64'), INTERNAL_HOP_KEY: randomBytes(32).toString('base64url'),
  NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}`,
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => name.startsWith('SUBSCRIPTIONS_'))) as Record<string, string>,
});
try {
  const { request, tokenFor } = gatewayClient(() => server.base);
  const tokens = [await tokenFor(OPERATOR.id, OPERATOR.secret)];
  const admin = await request('POST', '/platform/oauth/v1/token', { form: { grant_type: 'client_credentials', client_id: OPERATOR.id, client_secret: OPERATOR.secret, scope: 'admin' } });
  for (let i = 1; i < CLIENTS; i++) {
    const res = await request('POST', '/platform/admin/v1/clients', { token: (admin.body as { access_token: string }).access_token, body: { organisation: 'org-bench', scopes: ['roadside'] } });
    if (res.status !== 201) throw new Error(`client ${i}: ${res.status} ${JSON.stringify(res.body)}`);
    const { clientId, clientSecret } = res.body as { clientId: string; clientSecret: string };
    tokens.push(await tokenFor(clientId, clientSecret));
  }
  await settle();
  await collectGarbage(inspectPort);
  const before = await processFigures(server.base);
  const started = performance.now();
  const opened: { socket: WebSocket; outcome: Outcome }[] = [];
  // In batches of 50, as a client pool would open them.
  for (let i = 0; i < CONNECTIONS; i += 50) {
    opened.push(...await Promise.all(Array.from({ length: Math.min(50, CONNECTIONS - i) }, (_, n) => connect(server.base, tokens[(i + n) % CLIENTS]!))));
  }
  const openMs = performance.now() - started;
  await settle();
  await collectGarbage(inspectPort);
  const after = await processFigures(server.base);
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const idle = await processFigures(server.base);
  const closedBy = new Map<string, number>();
  for (const { outcome } of opened) {
    if (!outcome.closed) continue;
    const key = `${outcome.closed.code} ${outcome.closed.reason.replace(/[0-9a-f-]{36}|bench-operator|client-[\w-]+/g, '<client>')}`;
    closedBy.set(key, (closedBy.get(key) ?? 0) + 1);
  }
  const acknowledged = opened.filter((o) => o.outcome.acknowledged).length;
  const open = opened.filter((o) => o.socket.readyState === WebSocket.OPEN).length;
  console.log(`${CONNECTIONS} connections over ${CLIENTS} client(s), opened in ${(openMs / 1000).toFixed(1)} s: ${acknowledged} acknowledged, ${open} still open after ${((performance.now() - started) / 1000).toFixed(0)} s`);
  for (const [key, count] of closedBy) console.log(`  closed by the gateway: ${count} x ${key}`);
  console.log(`gateway RSS ${mb(before.rss)} -> ${mb(after.rss)} (${mb(after.rss - before.rss)}), heap used ${mb(before.heap)} -> ${mb(after.heap)} (${mb(after.heap - before.heap)})`);
  if (open) console.log(`per open connection: RSS ${((after.rss - before.rss) / open / 1024).toFixed(1)} KB, heap ${((after.heap - before.heap) / open / 1024).toFixed(1)} KB`);
  console.log(`gateway CPU holding them for ${IDLE_MS / 1000} s: ${((idle.cpuSeconds - after.cpuSeconds) / (IDLE_MS / 1000) * 100).toFixed(1)}% of a core`);
  for (const { socket } of opened) socket.terminate();
} finally {
  await server.stop();
}
