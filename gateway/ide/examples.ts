/**
 * The example operations preloaded as GraphiQL tabs: each area's (its `ide-examples.ts`), in the registry's
 * order. test/gateway/ide.test.ts validates every example of a composed area against the supergraph's API
 * schema, so they cannot rot; the IDE only serves the examples that validate (an area not composed yet has no
 * tab). They select the `id` of every entity they read, as a frontend with a normalising cache must
 * (test/gateway/ide-cache.test.ts).
 */
import { subgraphDefinitions } from '../../subgraphs/index.ts';
import type { IdeExample as AreaExample } from '../../subgraphs/platform/subgraph.ts';

export interface IdeExample extends AreaExample {
  /** The subgraph that declares it. */
  area: string;
}

export const ideExamples: readonly IdeExample[] = Object.values(subgraphDefinitions)
  .flatMap(({ name, examples = [] }) => examples.map((example) => ({ area: name, ...example })));
