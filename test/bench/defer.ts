/**
 * `npm run bench -- defer`: @defer through the gateway, on `npm start` (embedded PGlite; DATABASE_URL is not used),
 * side by side in one run, each of REQUESTS sequential requests in turn (a, b, c, a, b, c...), p50 of each:
 * - time to the first part of a user lookup with a deferred Risk Index map, against the same query without the
 *   map field (target: no later);
 * - total time and the server's CPU per request of the deferred query against the undeferred one with the map
 *   (target: within 15%).
 * Each request asks for a map of another area (the Risk Index caches maps by area), as distinct screens would.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { meros } from 'meros/browser';
import { BENCH_CLIENT, backgroundLoadDone, cpuSeconds, loadedDefault, startOnce, stop } from './start.ts';

const REQUESTS = 50;
const USER = 'defer-bench-user';
const MULTIPART = 'multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9';

const FAST = 'query Fast($id: ID!) { user(userId: $id) { id userId homeZip enrollmentStatus } }';
const DEFERRED = `query Deferred($id: ID!, $wkt: WKT!) { user(userId: $id) { id userId homeZip enrollmentStatus }
  ... @defer(label: "map") { riskIndex(wkt: $wkt, radius: 0.01) { map } } }`;
const UNDEFERRED = 'query Undeferred($id: ID!, $wkt: WKT!) { user(userId: $id) { id userId homeZip enrollmentStatus } riskIndex(wkt: $wkt, radius: 0.01) { map } }';

/** A Chicago point of its own for request `i` (no cached map). */
const area = (i: number) => `POINT(${(-87.75 + (i % 25) * 0.012).toFixed(4)} ${(41.8 + Math.floor(i / 25) * 0.03 + (i % 7) * 0.004).toFixed(4)})`;

const p50 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main() {
  const dataDir = await mkdtemp(join(tmpdir(), 'frg-defer-bench-'));
  const { child, url } = await startOnce(dataDir, { ...loadedDefault(dataDir), LOG_LEVEL: 'warn' });
  try {
    await backgroundLoadDone(url);
    const tokenAnswer = await fetch(`${url}/platform/oauth/v1/token`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: BENCH_CLIENT.id, client_secret: BENCH_CLIENT.secret }),
    });
    const { access_token: token } = await tokenAnswer.json() as { access_token: string };
    const post = (query: string, variables: Record<string, unknown>, accept: string) => fetch(`${url}/graphql`, {
      method: 'POST', body: JSON.stringify({ query, variables }),
      headers: { accept, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    });
    await post('mutation($id: ID) { createUser(input: { userId: $id, homeZip: "60601" }) { userId } }', { id: USER }, 'application/json');

    /** One request: ms to the first part (or the whole answer), ms to the end, server CPU ms. */
    async function timed(query: string, variables: Record<string, unknown>, accept: string) {
      const cpuBefore = await cpuSeconds(child.pid!);
      const began = performance.now();
      const parts = await meros(await post(query, variables, accept));
      let first = 0;
      if (parts instanceof Response) { await parts.text(); first = performance.now() - began; } else {
        for await (const part of parts) { void part; first ||= performance.now() - began; }
      }
      const total = performance.now() - began;
      return { first, total, cpu: ((await cpuSeconds(child.pid!)) - cpuBefore) * 1000 };
    }

    const runs = { fast: [] as Awaited<ReturnType<typeof timed>>[], deferred: [] as Awaited<ReturnType<typeof timed>>[], undeferred: [] as Awaited<ReturnType<typeof timed>>[] };
    // Warm-up: plans, connections, and the compile cache.
    for (let i = 0; i < 3; i++) {
      await timed(FAST, { id: USER }, MULTIPART);
      await timed(DEFERRED, { id: USER, wkt: area(1000 + i) }, MULTIPART);
      await timed(UNDEFERRED, { id: USER, wkt: area(2000 + i) }, 'application/json');
    }
    for (let i = 0; i < REQUESTS; i++) {
      runs.fast.push(await timed(FAST, { id: USER }, MULTIPART));
      runs.deferred.push(await timed(DEFERRED, { id: USER, wkt: area(2 * i) }, MULTIPART));
      runs.undeferred.push(await timed(UNDEFERRED, { id: USER, wkt: area(2 * i + 1) }, 'application/json'));
    }
    const row = (name: string, r: typeof runs.fast) => ({
      query: name, 'first part p50 ms': +p50(r.map((x) => x.first)).toFixed(1), 'total p50 ms': +p50(r.map((x) => x.total)).toFixed(1),
      'server cpu p50 ms': +p50(r.map((x) => x.cpu)).toFixed(1),
    });
    const table = [row('user lookup, no map', runs.fast), row('user + deferred map', runs.deferred), row('user + map, undeferred', runs.undeferred)];
    console.table(table);
    const [fast, deferred, undeferred] = table as [ReturnType<typeof row>, ReturnType<typeof row>, ReturnType<typeof row>];
    console.log(`first part, deferred / without the map: ${(deferred['first part p50 ms'] / fast['first part p50 ms']).toFixed(2)} (target: no later)`);
    console.log(`total, deferred / undeferred: ${(deferred['total p50 ms'] / undeferred['total p50 ms']).toFixed(2)}; `
      + `cpu, deferred / undeferred: ${(deferred['server cpu p50 ms'] / Math.max(undeferred['server cpu p50 ms'], 0.1)).toFixed(2)} (target: within 1.15)`);
    console.log(`(${REQUESTS} requests each, in turn; server CPU from /proc at 10 ms resolution, so the CPU p50 is coarse)`);
  } finally {
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
  }
}

await main();
