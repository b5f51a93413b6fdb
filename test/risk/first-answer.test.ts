/**
 * Data ready at the first answer: on the embedded database a first start copies in the Risk Index
 * data prepared at install time before it answers; on PostgreSQL (a background load) /readyz
 * answers 503, saying why, until the data are loaded.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { LOAD_LOCK } from '../../subgraphs/risk/data/load.ts';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { prepareRiskData } from '../../subgraphs/risk/data/prepare.ts';
import { startChildServer, type ChildServer } from '../support/child-server.ts';
import { testDatabase } from '../support/database.ts';
import { startTestStack, type TestStack } from '../support/stack.ts';

const GOLDEN_GATE = 'POINT(-122.4783 37.8199)';
let server: ChildServer | undefined;
let stack: TestStack | undefined;
afterAll(async () => { await server?.stop(); await stack?.close(); });

describe('on the embedded database', () => {
  it('a first start on a fresh DATA_DIR answers its first Risk Index request with the data READY', async () => {
    await prepareRiskData(); // what `npm install` does (postinstall)
    server = await startChildServer({ PGLITE_IN_MEMORY: 'false' });
    const res = await fetch(`${server.base}/riskIndex/v1/riskInfo?${new URLSearchParams({ geometry: GOLDEN_GATE })}`);
    expect(res.status).toBe(200);
    const body = await res.json() as { area: { dataStatus: string; coverage: string }; riskInfo: { crashes: number } };
    expect(body.area).toMatchObject({ dataStatus: 'READY', coverage: 'COVERED' });
    expect((await fetch(`${server.base}/readyz`)).status).toBe(200);
  }, 300_000);
});

describe.runIf(process.env.DATABASE_URL)('on PostgreSQL', () => {
  it('/readyz answers 503 with the reason until the Risk Index data are loaded, then 200', async () => {
    const own = await testDatabase();
    // Held here, the load's lock keeps the first start's load waiting, as a long load would.
    const holder = new pg.Client({ connectionString: own.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock($1)', [LOAD_LOCK]);
      stack = await startTestStack({ env: own.env });
      const waiting = await stack.request('GET', '/readyz');
      expect(waiting.status).toBe(503);
      expect(waiting.body).toMatchObject({ checks: { risk: false }, pending: { risk: expect.stringMatching(/Risk Index data .* loading/) } });
      const loading = await stack.request('GET', `/riskIndex/v1/riskInfo?${new URLSearchParams({ geometry: GOLDEN_GATE })}`);
      expect(loading.body.area.dataStatus).toBe('LOADING');
      // An incomplete answer is never cached (test/risk/http-cache.test.ts: once READY, it is).
      expect(loading.headers.get('cache-control')).toBe('no-store');
      expect(loading.headers.get('etag')).toBeNull();
      const map = await stack.request('GET', `/riskIndex/v1/map?${new URLSearchParams({ geometry: GOLDEN_GATE })}`, { headers: { 'if-none-match': '*' } });
      expect(map.status).toBe(200);
      expect(map.headers.get('cache-control')).toBe('no-store');

      await holder.query('select pg_advisory_unlock($1)', [LOAD_LOCK]);
      await riskDataLoaded(stack.stack.subgraphs.find((s) => s.name === 'risk')!.db.orm.em);
      const ready = await stack.request('GET', '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.pending).toBeUndefined();
    } finally {
      await holder.end();
      await stack?.close();
      stack = undefined;
      await own.drop();
    }
  }, 600_000);
});
