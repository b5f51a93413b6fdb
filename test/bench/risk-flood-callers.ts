/**
 * The callers of the many-address flood (risk-flood.ts), in a worker thread so that their own work
 * does not delay the /healthz samples taken on the main thread. Also exports `send`, one request
 * through an agent bound to a source address.
 */
import http from 'node:http';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { percentile } from './args.ts';
import { box } from './risk-stack.ts';

export interface CallersTask { base: string; callers: number; seconds: number }
export interface CallersResult { requests: number; statuses: Record<string, number>; withoutRetryAfter: number; p50: number; p99: number }

const GRAPHQL = 'query Flood($wkt: WKT!) { riskIndex(wkt: $wkt) { area { cellsTouched } riskInfo { index riskiestCells { cell riskIndex } } accidentSummary { total byHourOfWeek { hourOfWeek crashes } } } }';
/** Chicago (~750 km², resolution 7) and a part of Los Angeles: hundreds of cells each. */
const CHICAGO = [-87.95, 41.7, -87.68, 42.0] as const;
const LOS_ANGELES = [-118.6, 33.8, -118.1, 34.2] as const;

/** The area, shifted by up to ~1 km when `vary` (a new area each time: the geometry work is done again). */
function area([w, s, e, n]: readonly number[], vary: boolean) {
  const dx = vary ? Math.round(Math.random() * 1000) / 100_000 : 0;
  const dy = vary ? Math.round(Math.random() * 1000) / 100_000 : 0;
  return box(w + dx, s + dy, e + dx, n + dy);
}

export interface FloodRequest { method: 'GET' | 'POST'; path: string; body?: string }
/** Every data set of a city (1,000 FARS records), the SVG map of a part of Los Angeles, the same through GraphQL. */
export const KINDS: ((vary: boolean) => FloodRequest)[] = [
  (vary) => ({ method: 'GET', path: `/riskIndex/v1/all?${new URLSearchParams({ geometry: area(CHICAGO, vary), limit: '1000' })}` }),
  (vary) => ({ method: 'GET', path: `/riskIndex/v1/map?${new URLSearchParams({ geometry: area(LOS_ANGELES, vary) })}` }),
  (vary) => ({ method: 'POST', path: '/graphql', body: JSON.stringify({ query: GRAPHQL, variables: { wkt: area(LOS_ANGELES, vary) } }) }),
];

/** One request through `agent` (bound to the caller's address): the status, and the Retry-After header. */
export function send(base: URL, agent: http.Agent, request: FloodRequest) {
  return new Promise<{ status: number; retryAfter?: string }>((resolve, reject) => {
    const req = http.request({
      host: base.hostname, port: base.port, method: request.method, path: request.path, agent, timeout: 30_000,
      headers: request.body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(request.body) } : {},
    }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(request.body);
  });
}

/** `callers` loops, caller i from 127.0.0.(10 + i), each sending the kinds in turn (every other one on a shifted area) until the time is up. */
async function flood({ base, callers, seconds }: CallersTask): Promise<CallersResult> {
  const url = new URL(base);
  const agents = Array.from({ length: callers }, (_, i) => new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: `127.0.0.${10 + i}` }));
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  let withoutRetryAfter = 0;
  const deadline = performance.now() + seconds * 1000;
  await Promise.all(agents.map(async (agent, i) => {
    for (let n = i; performance.now() < deadline; n++) {
      const t0 = performance.now();
      try {
        const res = await send(url, agent, KINDS[n % KINDS.length]!(n % 2 === 0));
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        if (res.status === 503 && !res.retryAfter) withoutRetryAfter += 1;
      } catch { statuses.error = (statuses.error ?? 0) + 1; }
      latencies.push(performance.now() - t0);
    }
  }));
  for (const agent of agents) agent.destroy();
  return { requests: latencies.length, statuses, withoutRetryAfter, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

if (!isMainThread && parentPort) parentPort.postMessage(await flood(workerData as CallersTask));
