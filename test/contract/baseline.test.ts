/**
 * The committed REST contract (schema/openapi.json, the breaking-change baseline) is what the server
 * serves at /openapi.json: a change to the REST tables fails here until `npm run openapi` updates it.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { buildOpenApi } from '../../gateway/rest/openapi.ts';
import { restRoutes } from '../../gateway/rest/index.ts';

it('schema/openapi.json is the generated document (run `npm run openapi` when this fails)', () => {
  const committed = readFileSync(new URL('../../schema/openapi.json', import.meta.url), 'utf8');
  expect(committed).toBe(`${JSON.stringify(buildOpenApi(restRoutes), null, 2)}\n`);
});
