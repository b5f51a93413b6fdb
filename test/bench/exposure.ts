/**
 * `npm run bench:exposure [-- --duration=15] [--connections=200] [--points=40]`
 *
 * Figures for cost and exposure, measured on the embedded default started as `npm start` would
 * (a child process on loopback, PGlite in memory, overload protection at its defaults):
 * - the TCP ports the process listens on (the gateway's only: no subgraph port);
 * - how long a 694 KB introspection-heavy GraphQL document takes to be refused;
 * - `/metrics` status and size after a flood of 40 operation names of 900 KB and 220 distinct names;
 * - a bounded flood: `connections` concurrent heavy Risk Index requests (a zig-zag LINESTRING of
 *   `points` vertices, radius 5) for `duration` seconds, while `/healthz` is probed every 50 ms and
 *   ordinary booking reads run at 4 concurrent: the probe's p50/p99/max, the flood's answers by
 *   status, and the success rate of the booking reads.
 * Bounded: duration at most 20 s, connections at most 200. Prints the figures and writes JSON to
 * test/bench/results/.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import autocannon from 'autocannon';
import { startChildServer } from '../support/child-server.ts';
import { listeningPorts } from '../support/ports.ts';
import { zigzag } from '../support/zigzag.ts';
import { flag, percentile } from './args.ts';

const DURATION = flag('duration', 15, 20);
const CONNECTIONS = Math.round(flag('connections', 200, 200));
const POINTS = Math.round(flag('points', 40, 5_000));

const CLIENT = { id: 'exposure-bench', secret: 'exposure-bench-secret-0123456789' };

const server = await startChildServer({
  NODE_ENV: 'production', LOG_LEVEL: 'warn', BOOTSTRAP_CLIENT_ID: CLIENT.id, BOOTSTRAP_CLIENT_SECRET: CLIENT.secret,
  RATE_LIMIT_PER_MINUTE: '1000000000', TOKEN_RATE_LIMIT_PER_MINUTE: '1000',
  // The defaults, stated: the child-server helper turns shedding off for tests.
  OVERLOAD_MAX_EVENT_LOOP_DELAY_MS: process.env.OVERLOAD_MAX_EVENT_LOOP_DELAY_MS ?? '200',
});
const figures: Record<string, unknown> = { duration: DURATION, connections: CONNECTIONS, points: POINTS };
try {
  const base = server.base;
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  // 1. Listening ports.
  const ports = await listeningPorts(server.child.pid!);
  figures.listeningPorts = ports;
  figures.gatewayPort = Number(new URL(base).port);

  // Right after start-up the first load samples may still shed (503): retry until a token comes.
  let token = '';
  for (let i = 0; i < 40 && !token; i++) {
    const res = await post('/platform/oauth/v1/token', JSON.stringify({ grant_type: 'client_credentials', client_id: CLIENT.id, client_secret: CLIENT.secret }));
    if (res.ok) token = ((await res.json()) as { access_token: string }).access_token;
    else await new Promise((r) => setTimeout(r, 250));
  }
  if (!token) throw new Error('no token');
  const auth = { authorization: `Bearer ${token}` };

  // 2. A 694 KB introspection-heavy document.
  const parts: string[] = [];
  for (let i = 0, size = 0; size < 694 * 1024; i++) {
    const part = `i${i}: __schema { types { name fields { name type { name ofType { name fields { name type { name } } } } } } }`;
    parts.push(part);
    size += part.length + 1;
  }
  const introspection = JSON.stringify({ query: `{ ${parts.join(' ')} }` });
  const refusals: number[] = [];
  let refusedWith = '';
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    const res = await post('/graphql', introspection, auth);
    const text = await res.text();
    refusals.push(performance.now() - started);
    refusedWith = `${res.status} ${text.length} bytes`;
  }
  refusals.sort((a, b) => a - b);
  figures.introspection694KB = { medianMs: percentile(refusals, 50), maxMs: refusals.at(-1), answer: refusedWith };

  // 3. Operation-name flood, then /metrics.
  for (let i = 0; i < 40; i++) await post('/graphql', JSON.stringify({ query: `query Flood${i}${'N'.repeat(900 * 1024)} { __typename }` }), auth);
  for (let i = 0; i < 220; i++) await post('/graphql', JSON.stringify({ query: `query Distinct${i} { __typename }` }), auth);
  figures.floodNameStatuses = await post('/graphql', JSON.stringify({ query: `query Last${'N'.repeat(900 * 1024)} { __typename }` }), auth).then((r) => r.status);
  const metrics = await fetch(`${base}/metrics`);
  figures.metricsAfterFlood = { status: metrics.status, bytes: (await metrics.text()).length };

  // 4. Bounded flood with /healthz probes and booking reads.
  const heavyPath = `/riskIndex/v1/riskInfo?geometry=${encodeURIComponent(zigzag(POINTS))}&radius=5`;
  const single = performance.now();
  const one = await fetch(`${base}${heavyPath}`);
  figures.heavyRequestAlone = { status: one.status, ms: Math.round(performance.now() - single) };
  await one.text();

  const health: number[] = [];
  const healthStatuses: Record<string, number> = {};
  const bookings: Record<string, number> = {};
  let running = true;
  const probe = (async () => {
    while (running) {
      const started = performance.now();
      const res = await fetch(`${base}/healthz`).catch(() => null);
      health.push(performance.now() - started);
      const key = String(res?.status ?? 'error');
      healthStatuses[key] = (healthStatuses[key] ?? 0) + 1;
      await res?.text();
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const readers = Array.from({ length: 4 }, async () => {
    while (running) {
      const res = await fetch(`${base}/shared-mobility-insights/v2/bookings?first=10`, { headers: auth }).catch(() => null);
      const key = String(res?.status ?? 'error');
      bookings[key] = (bookings[key] ?? 0) + 1;
      await res?.text();
    }
  });
  const flood = await autocannon({ url: `${base}${heavyPath}`, connections: CONNECTIONS, duration: DURATION, timeout: 30 });
  running = false;
  await Promise.all([probe, ...readers]);
  health.sort((a, b) => a - b);
  const bookingTotal = Object.values(bookings).reduce((a, b) => a + b, 0);
  figures.flood = {
    heavyRequests: flood.requests.total, heavy2xx: flood['2xx'], heavyNon2xx: flood.non2xx, heavyErrors: flood.errors, heavyTimeouts: flood.timeouts,
    healthz: { probes: health.length, statuses: healthStatuses, p50Ms: percentile(health, 50), p99Ms: percentile(health, 99), maxMs: health.at(-1) },
    bookingReads: { total: bookingTotal, byStatus: bookings, successRate: bookingTotal ? (bookings['200'] ?? 0) / bookingTotal : NaN },
  };
} finally {
  await server.stop();
}

console.log(JSON.stringify(figures, null, 2));
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(new URL(`./results/exposure-${new Date().toISOString().replaceAll(':', '-')}.json`, import.meta.url), JSON.stringify(figures, null, 2));
