/**
 * METRICS_PORT: with WORKERS=2 the primary process serves both workers' metrics added up
 * (PostgreSQL, which WORKERS>1 needs: the machine's, in both CI runs, as in postgres.test.ts); one
 * process serves its own (PGlite). Either way the public port no longer answers /metrics. Outputs
 * are read with a real Prometheus text-format parser.
 */
import http from 'node:http';
import parsePrometheusTextFormat, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startChildServer, type ChildServer } from '../support/child-server.ts';
import { testDatabase } from '../support/database.ts';

const POSTGRES = process.env.DATABASE_URL ?? process.env.CI_DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/test';
const N = 40;
const HEALTHZ = { method: 'GET', route: '/healthz', status_code: '200' };
const figures: Record<string, unknown> = {};

/** GET on a connection of its own: node:cluster's primary hands each new connection to the next worker in turn. */
const getAlone = (url: string) => new Promise<number>((resolve, reject) => {
  http.get(url, { agent: false }, (response) => {
    response.resume();
    response.on('end', () => resolve(response.statusCode ?? 0));
  }).on('error', reject);
});

async function scrape(url: string): Promise<PrometheusFamily[]> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusTextFormat(await res.text());
}

/** The values of a counter's or gauge's samples whose labels include `labels`. */
function values(families: PrometheusFamily[], name: string, labels: Record<string, string> = {}): number[] {
  const family = families.find((f) => f.name === name);
  return (family?.metrics ?? [])
    .filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    .map((m) => Number(m.value));
}
const one = (families: PrometheusFamily[], name: string, labels: Record<string, string> = {}) => {
  const found = values(families, name, labels);
  expect(found, `${name} ${JSON.stringify(labels)}`).toHaveLength(1);
  return found[0]!;
};

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, limitMs = 120_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (done(value) || Date.now() - started > limitMs) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
}

afterAll(() => { process.stdout.write(`metrics figures: ${JSON.stringify(figures)}\n`); });

describe('WORKERS=2 with METRICS_PORT (PostgreSQL)', () => {
  let database: Awaited<ReturnType<typeof testDatabase>>;
  let server: ChildServer;
  let metricsUrl: string;
  const started = Math.floor(Date.now() / 1000);

  beforeAll(async () => {
    database = await testDatabase(POSTGRES);
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    server = await startChildServer({ ...database.env, PGLITE_IN_MEMORY: 'false', LOG_LEVEL: 'warn', WORKERS: '2', METRICS_PORT: String(port) });
    // The first worker starts alone (it migrates), then the second.
    const families = await until(() => scrape(metricsUrl).catch(() => []), (f) => values(f, 'gateway_processes')[0] === 2);
    expect(one(families, 'gateway_processes')).toBe(2);
  }, 300_000);

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('adds up a counter over both workers: N requests spread over them raise it by exactly N', async () => {
    // Round robin gives each worker N/2 of these: a primary reading one worker's registry would count N/2.
    const before = one(await scrape(metricsUrl), 'gateway_http_requests_total', HEALTHZ);
    const statuses = [];
    for (let i = 0; i < N; i++) statuses.push(await getAlone(`${server.base}/healthz`));
    expect(statuses.every((s) => s === 200)).toBe(true);
    const after = await scrape(metricsUrl);
    figures.twoWorkers = { requests: N, before, after: one(after, 'gateway_http_requests_total', HEALTHZ) };
    expect(one(after, 'gateway_http_requests_total', HEALTHZ)).toBe(before + N);
  });

  it('aggregates per-process gauges so they still mean something: subgraph up is 1, one start time', async () => {
    const families = await scrape(metricsUrl);
    for (const subgraph of ['booking', 'scoring', 'roadside', 'registration', 'risk', 'webhooks']) {
      expect(one(families, 'gateway_subgraph_up', { subgraph }), subgraph).toBe(1);
    }
    const startTime = one(families, 'process_start_time_seconds');
    expect(startTime).toBeGreaterThanOrEqual(started - 5);
    expect(startTime).toBeLessThanOrEqual(Date.now() / 1000);
    expect(one(families, 'nodejs_version_info', { version: process.version })).toBe(1);
  });

  it('serves nothing else on METRICS_PORT, and no /metrics on the public port', async () => {
    expect((await fetch(`${server.base}/metrics`)).status).toBe(404);
    expect((await fetch(metricsUrl.replace('/metrics', '/graphql'))).status).toBe(404);
  });
});

describe('WORKERS=2 without METRICS_PORT (PostgreSQL)', () => {
  let database: Awaited<ReturnType<typeof testDatabase>>;
  let server: ChildServer;

  beforeAll(async () => {
    database = await testDatabase(POSTGRES);
    server = await startChildServer({ ...database.env, PGLITE_IN_MEMORY: 'false', LOG_LEVEL: 'warn', WORKERS: '2' });
  }, 300_000);

  afterAll(async () => {
    await server?.stop();
    await database?.drop();
  });

  it('serves no /metrics (one worker\'s numbers alone would mislead) and says at start where to find them', async () => {
    expect((await fetch(`${server.base}/metrics`)).status).toBe(404);
    expect(server.stderr()).toContain('METRICS_PORT is not set');
  });
});

describe('one process with METRICS_PORT (PGlite)', () => {
  let server: ChildServer;
  let metricsUrl: string;

  beforeAll(async () => {
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    server = await startChildServer({ LOG_LEVEL: 'warn', METRICS_PORT: String(port) });
  }, 180_000);

  afterAll(async () => { await server?.stop(); });

  it('serves its metrics on METRICS_PORT, not on the public port', async () => {
    expect((await fetch(`${server.base}/metrics`)).status).toBe(404);
    const before = await scrape(metricsUrl);
    expect(one(before, 'gateway_processes')).toBe(1);
    for (let i = 0; i < N; i++) expect(await getAlone(`${server.base}/healthz`)).toBe(200);
    const after = await scrape(metricsUrl);
    figures.oneProcess = { requests: N, before: one(before, 'gateway_http_requests_total', HEALTHZ), after: one(after, 'gateway_http_requests_total', HEALTHZ) };
    expect(one(after, 'gateway_http_requests_total', HEALTHZ)).toBe(one(before, 'gateway_http_requests_total', HEALTHZ) + N);
    expect(one(after, 'process_start_time_seconds')).toBeGreaterThan(0);
  });
});
