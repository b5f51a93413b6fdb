/** Composes schema/supergraph.graphql from the subgraph SDL files; `--check` fails if the committed file is stale. */
import { readFileSync, writeFileSync } from 'node:fs';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { subgraphList, supergraphPath } from './subgraphs.ts';

const services = subgraphList().map((s) => ({ name: s.name, url: s.url, typeDefs: parse(readFileSync(s.schemaPath, 'utf8')) }));
const result = composeServices(services);
if (result.errors) {
  console.error(`Composition failed:\n${result.errors.map((e) => `- ${e.message}`).join('\n')}`);
  process.exit(1);
}
const sdl = `${result.supergraphSdl.trim()}\n`;
if (process.argv.includes('--check')) {
  let current = '';
  try { current = readFileSync(supergraphPath, 'utf8'); } catch { /* missing counts as stale */ }
  if (current !== sdl) {
    console.error('schema/supergraph.graphql is stale: run `npm run compose` and commit the result.');
    process.exit(1);
  }
  console.log('schema/supergraph.graphql is up to date.');
} else {
  writeFileSync(supergraphPath, sdl);
  for (const hint of result.hints ?? []) console.log(`hint: ${hint.toString()}`);
  console.log(`Composed ${services.length} subgraphs into schema/supergraph.graphql.`);
}
