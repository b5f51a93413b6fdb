/**
 * Composes schema/supergraph.graphql from the subgraph SDL files, and writes the possible types of
 * every union and interface of the API schema (schema/possible-types.json, for a client cache such
 * as Apollo Client's InMemoryCache); `--check` fails if either committed file is stale. The committed
 * supergraph is the baseline: a breaking change from it (contract/graph-diff.ts) is written only
 * when CHANGELOG.md acknowledges it. So is a change that breaks a registered trusted document: those of
 * the gateway's database when DATABASE_URL is set, and of each manifest file given with `--documents`
 * (repeatable), are validated against the new API schema (contract/document-diff.ts).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { parseArgs } from 'node:util';
import { composeServices } from '@apollo/composition';
import { possibleRuntimeTypes, Supergraph } from '@apollo/federation-internals';
import { parse } from 'graphql';
import { possibleTypesPath, subgraphList, supergraphPath } from './subgraphs.ts';
import { acknowledged } from './contract/gate.ts';
import { graphBreakingChanges } from './contract/graph-diff.ts';
import { documentBreakingChanges, documentsOfDatabase, documentsOfFile } from './contract/document-diff.ts';

const { values: args } = parseArgs({ options: { check: { type: 'boolean', default: false }, documents: { type: 'string', multiple: true, default: [] } } });

const services = subgraphList().map((s) => ({ name: s.name, url: s.url, typeDefs: parse(readFileSync(s.schemaPath, 'utf8')) }));
const result = composeServices(services);
if (result.errors) {
  console.error(`Composition failed:\n${result.errors.map((e) => `- ${e.message}`).join('\n')}`);
  process.exit(1);
}
const sdl = `${result.supergraphSdl.trim()}\n`;
const abstractTypes = Supergraph.build(sdl).apiSchema().types().filter((t) => t.kind === 'UnionType' || t.kind === 'InterfaceType');
const possibleTypes = Object.fromEntries(abstractTypes.map((t) => [t.name, possibleRuntimeTypes(t).map((o) => o.name).sort()]).sort(([a], [b]) => String(a).localeCompare(String(b))));
const outputs: [path: string, text: string][] = [[supergraphPath, sdl], [possibleTypesPath, `${JSON.stringify(possibleTypes, null, 2)}\n`]];
const name = (path: string) => relative(process.cwd(), path);
const read = (path: string) => {
  try { return readFileSync(path, 'utf8'); } catch { return undefined; }
};
const baseline = read(supergraphPath);
// The registered documents are read (and the database opened) only when the graph changed.
const registeredDocuments = async () => {
  const documents = [
    ...(process.env.DATABASE_URL ? await documentsOfDatabase(process.env.DATABASE_URL) : []),
    ...(await Promise.all(args.documents.map(documentsOfFile))).flat(),
  ];
  if (documents.length) console.log(`Checked ${documents.length} registered document(s) against the new supergraph.`);
  return documents;
};
const changes = baseline === undefined || baseline === sdl ? [] : [
  ...await graphBreakingChanges(baseline, sdl), ...documentBreakingChanges(baseline, sdl, await registeredDocuments()),
];

if (args.check) {
  const stale = outputs.filter(([path, text]) => read(path) !== text);
  for (const [path] of stale) console.error(`${name(path)} is stale: run \`npm run compose\` and commit the result.`);
  if (stale.length) {
    acknowledged('the graph', changes);
    process.exit(1);
  }
  console.log(`${outputs.map(([path]) => name(path)).join(' and ')} are up to date.`);
} else {
  if (!acknowledged('the graph', changes)) process.exit(1);
  for (const [path, text] of outputs) writeFileSync(path, text);
  for (const hint of result.hints ?? []) console.log(`hint: ${hint.toString()}`);
  console.log(`Composed ${services.length} subgraphs into ${name(supergraphPath)}; possible types in ${name(possibleTypesPath)}.`);
}
