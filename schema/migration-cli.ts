/**
 * Writes the next migration for a subgraph (or `platform`, the gateway's own tables) from the
 * difference between its entities and its committed migrations, applied to a fresh in-memory database.
 * Usage: npm run migration:create -- <name> [--initial]
 */
import { inMemoryConfig } from '../subgraphs/platform/config.ts';
import { openDatabase, type OrmOptions } from '../subgraphs/platform/db/orm.ts';
import { subgraphDefinitions } from '../subgraphs/index.ts';
import { GATEWAY_ENTITIES, GATEWAY_MIGRATIONS } from '../gateway/stack.ts';

const name = process.argv[2];
const owners: Record<string, OrmOptions> = {
  platform: { name: 'platform', entities: GATEWAY_ENTITIES, migrationsPath: GATEWAY_MIGRATIONS },
  ...Object.fromEntries(Object.values(subgraphDefinitions).map((d) => [d.name, { name: d.name, entities: d.entities, migrationsPath: d.migrationsPath }])),
};
const owner = name ? owners[name] : undefined;
if (!owner) {
  console.error(`Usage: npm run migration:create -- <${Object.keys(owners).join('|')}>`);
  process.exit(2);
}
const db = await openDatabase(inMemoryConfig(), owner);
const result = await db.orm.migrator.create(owner.migrationsPath, false, false);
console.log(result.fileName ? `Wrote ${owner.migrationsPath}/${result.fileName}` : 'No changes: the migrations match the entities.');
await db.close();
