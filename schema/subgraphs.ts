import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';

export interface SubgraphEntry { name: string; url: string; schemaPath: string }

const root = fileURLToPath(new URL('..', import.meta.url));

/** The subgraph list from schema/supergraph.yaml. */
export function subgraphList(): SubgraphEntry[] {
  const doc = parseYaml(readFileSync(new URL('./supergraph.yaml', import.meta.url), 'utf8')) as {
    subgraphs: Record<string, { routing_url: string; schema: string }>;
  };
  return Object.entries(doc.subgraphs).map(([name, s]) => ({ name, url: s.routing_url, schemaPath: `${root}${s.schema}` }));
}

export const supergraphPath = fileURLToPath(new URL('./supergraph.graphql', import.meta.url));

/** The possible types of every union and interface of the API schema, as Apollo Client's `possibleTypes` takes them. */
export const possibleTypesPath = fileURLToPath(new URL('./possible-types.json', import.meta.url));
