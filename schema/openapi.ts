/**
 * Writes the published REST contract: schema/openapi.json (the document GET /openapi.json serves)
 * and schema/openapi-types.ts (its TypeScript types by openapi-typescript, for openapi-fetch
 * clients). The committed document is the baseline: a breaking change from it (contract/rest-diff.ts)
 * is written only when CHANGELOG.md acknowledges it. `--check` fails when either file is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { buildOpenApi } from '../gateway/rest/openapi.ts';
import { restRoutes } from '../gateway/rest/index.ts';
import { acknowledged } from './contract/gate.ts';
import { restBreakingChanges } from './contract/rest-diff.ts';
import { openApiTypes } from './contract/openapi-types.ts';

const documentFile = new URL('./openapi.json', import.meta.url);
const typesFile = new URL('./openapi-types.ts', import.meta.url);

const document = buildOpenApi(restRoutes);
const outputs: [URL, string][] = [[documentFile, `${JSON.stringify(document, null, 2)}\n`], [typesFile, await openApiTypes(document)]];
const read = (file: URL) => {
  try { return readFileSync(file, 'utf8'); } catch { return undefined; }
};
const baseline = read(documentFile);
const changes = baseline === undefined ? [] : restBreakingChanges(JSON.parse(baseline), JSON.parse(JSON.stringify(document)));
const name = (file: URL) => `schema/${file.pathname.split('/').pop()}`;

if (process.argv.includes('--check')) {
  const stale = outputs.filter(([file, text]) => read(file) !== text);
  for (const [file] of stale) console.error(`${name(file)} is stale: run \`npm run openapi\` and commit the result.`);
  if (stale.length) {
    acknowledged('the REST contract', changes);
    process.exit(1);
  }
  console.log('schema/openapi.json and schema/openapi-types.ts are up to date.');
} else {
  if (!acknowledged('the REST contract', changes)) process.exit(1);
  for (const [file, text] of outputs) writeFileSync(file, text);
  console.log(`Wrote schema/openapi.json (${Object.keys(document.paths).length} paths) and schema/openapi-types.ts.`);
}
