/**
 * `npm run risk:table [-- '<WKT>']` (`node test/bench/risk-table.ts`)
 *
 * The Risk Index of circles of growing radius around downtown Los Angeles (issue 24 item 1), or
 * around the WKT given, on the shipped NHTSA FARS 2013-2015 crashes: per radius the H3 resolution
 * of the cells, the area, its counts and rates and the index; then the fitted model. Starts the
 * risk subgraph on a fresh PGlite (or a fresh database on DATABASE_URL's server) and waits for the
 * background load, timed once.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { riskDataLoaded } from '../../subgraphs/risk/data/status.ts';
import { riskModel } from '../../subgraphs/risk/data/model.ts';
import { testDatabase } from '../support/database.ts';
import { buildRiskStack } from './risk-stack.ts';

const CENTRE = process.argv[2] ?? 'POINT(-118.25 34.05)';
const RADII = [0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.15, 0.2, 0.3, 0.5];
const FIELDS = 'index modelVersion areaKm2 rate smoothedRate credibility fatalCrashes fatalities';
const QUERY = `query Table($wkt: WKT!, $radius: Float) { riskIndex(wkt: $wkt, radius: $radius) { area { resolution cellsTouched } riskInfo { ${FIELDS} } } }`;

const dataDir = await mkdtemp(join(os.tmpdir(), 'risk-table-'));
const database = process.env.DATABASE_URL ? await testDatabase() : { env: {}, drop: async () => undefined };
const started = performance.now();
const { stack, riskEm } = await buildRiskStack(dataDir, database.env);
try {
  await riskDataLoaded(riskEm);
  console.log(`Crash data loaded ${((performance.now() - started) / 1000).toFixed(1)} s after the start (${'DATABASE_URL' in database.env ? 'PostgreSQL' : 'PGlite'})`);
  console.log(`Around ${CENTRE}:\n`);
  console.log('| radius (°) | resolution | cells | area km² | fatal crashes | fatalities | rate (/km²/yr) | smoothed rate | credibility | index | model |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const radius of RADII) {
    const res = await stack.gateway.app.inject({ method: 'POST', url: '/graphql', payload: { query: QUERY, variables: { wkt: CENTRE, radius } } });
    const body = res.json() as { data?: { riskIndex: { area: Record<string, number>; riskInfo: Record<string, number | string> } }; errors?: unknown };
    if (!body.data) throw new Error(`radius ${radius}: ${JSON.stringify(body.errors)}`);
    const { area, riskInfo: r } = body.data.riskIndex;
    console.log(`| ${radius} | ${area.resolution} | ${area.cellsTouched} | ${r.areaKm2} | ${r.fatalCrashes} | ${r.fatalities} | ${r.rate} | ${r.smoothedRate} | ${r.credibility} | ${r.index} | ${r.modelVersion} |`);
  }
  console.log('\nModel:', JSON.stringify(await riskModel(riskEm)));
} finally {
  await stack.close();
  await database.drop();
  await rm(dataDir, { recursive: true, force: true });
}
