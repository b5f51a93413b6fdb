/**
 * Loads roadside reference data from a folder holding vehicles.json, providers.json,
 * tow-locations.json and plans.json (same shapes as the shipped samples) into the roadside
 * database named by the environment (DATABASE_URL, or the PGlite data under DATA_DIR).
 * Rows are upserted by their natural keys, so it can run any number of times.
 * Usage: node subgraphs/roadside/data/load-cli.ts <folder>
 */
import { resolve } from 'node:path';
import { loadConfig } from '../../platform/config.ts';
import { openDatabase } from '../../platform/db/orm.ts';
import { refuseCleanly } from '../../platform/start-refused.ts';
import { roadside } from '../index.ts';
import { loadReferenceData } from './load.ts';

const folder = process.argv[2];
if (!folder) {
  console.error('Usage: node subgraphs/roadside/data/load-cli.ts <folder with vehicles.json, providers.json, tow-locations.json, plans.json>');
  process.exit(2);
}
const db = await refuseCleanly(() => openDatabase(loadConfig(), { name: roadside.name, entities: roadside.entities, migrationsPath: roadside.migrationsPath }));
try {
  const counts = await loadReferenceData(db.orm.em.fork(), resolve(folder));
  console.log(`Loaded ${JSON.stringify(counts)}`);
} finally {
  await db.close();
}
