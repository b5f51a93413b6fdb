/**
 * Prepares what a first start would otherwise make, once, at install time (`npm install`'s
 * postinstall): the PGlite cluster template (platform/db/cluster-template.ts), each subgraph's own
 * (SubgraphDefinition.prepare), and the IDE's bundle (gateway/ide/bundle.ts). Not fatal: a start
 * without them makes or loads them itself.
 */
import { prepareClusterTemplate } from './platform/db/cluster-template.ts';
import { subgraphDefinitions } from './index.ts';

const steps: [string, () => Promise<string>][] = [
  ['PGlite cluster template', () => prepareClusterTemplate()],
  ...Object.values(subgraphDefinitions).flatMap((d) => (d.prepare ? [[`${d.name}: prepared data`, d.prepare] as [string, () => Promise<string>]] : [])),
  ['GraphiQL bundle', async () => (await import('../gateway/ide/bundle.ts')).ideBundle()],
];
for (const [what, step] of steps) {
  const started = performance.now();
  try {
    const made = await step();
    console.log(`${what} ready (${((performance.now() - started) / 1000).toFixed(1)} s): ${made}`);
  } catch (error) {
    console.warn(`${what} not prepared (the first start makes or loads it instead): ${(error as Error).message}`);
  }
}
