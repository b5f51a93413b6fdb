/**
 * Loads real data into the Risk Index tables, then rebuilds the H3 aggregates.
 *   npm run risk:ingest -- fars <accident.csv>       NHTSA FARS accident.csv (any recent year)
 *   npm run risk:ingest -- traffic <feed.json>       realtime traffic feed (docs/risk-index.md)
 *   npm run risk:ingest -- rebuild                   only rebuild the aggregates
 * Uses DATABASE_URL (PostgreSQL) or the embedded PGlite under DATA_DIR, like the server.
 */
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { loadConfig } from '../platform/config.ts';
import { openDatabase } from '../platform/db/orm.ts';
import { refuseCleanly } from '../platform/start-refused.ts';
import { rebuildAggregates } from './data/aggregate.ts';
import { ingestFars } from './data/fars.ts';
import { ensureRiskData } from './data/load.ts';
import { ingestTrafficFeed } from './data/traffic-feed.ts';
import { risk } from './index.ts';

const [kind, file] = process.argv.slice(2);
if (!['fars', 'traffic', 'rebuild'].includes(kind ?? '') || (kind !== 'rebuild' && !file)) {
  console.error('Usage: npm run risk:ingest -- fars <accident.csv> | traffic <feed.json> | rebuild');
  process.exit(2);
}

const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
const db = await refuseCleanly(() => openDatabase(config, { name: risk.name, entities: risk.entities, migrationsPath: risk.migrationsPath }));
const em = db.orm.em.fork();
const started = Date.now();
try {
  if (kind === 'fars') {
    const size = (await stat(file)).size;
    console.log(`Reading ${file} (${(size / 1e6).toFixed(1)} MB)`);
    const summary = await ingestFars(em, createReadStream(file), (s) => {
      console.log(`  ${s.read} rows read, ${s.loaded} loaded, skipped: ${s.skipped.outsideCoverage} outside coverage, ${s.skipped.noLocation} without position, ${s.skipped.invalid} invalid`);
    });
    console.log(`FARS: ${summary.loaded} of ${summary.read} crashes loaded (California and Illinois).`);
    // The (sample) counting stations when none are stored; the shipped crashes are not added to a file loaded by hand.
    await ensureRiskData(em, undefined, { crashes: false });
  } else if (kind === 'traffic') {
    const summary = await ingestTrafficFeed(em, JSON.parse(await readFile(file, 'utf8')));
    console.log(`Traffic feed: ${summary.loaded} of ${summary.read} observations loaded, ${summary.outsideCoverage} outside coverage.`);
  }
  if (kind !== 'traffic') {
    console.log('Rebuilding the H3 aggregates ...');
    const built = await rebuildAggregates(em);
    console.log(`  ${built.crashCells} crash cells, ${built.trafficCells} traffic cells (resolutions 5, 7, 9).`);
  }
  console.log(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
} catch (error) {
  console.error(`Ingestion failed: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  await db.close();
}
