import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { FORKED_FROM } from '../../gateway/query-plan-executor/fork.ts';

/**
 * gateway/query-plan-executor is a fork of @apollo/gateway's executor that reaches into its private fields
 * and dist/ modules: on an upgrade this fails until the fork is reviewed against the new version (fork.ts).
 */
describe('the query-plan executor fork', () => {
  it('is pinned to the installed @apollo/gateway', () => {
    const installed = (createRequire(import.meta.url)(`${FORKED_FROM.package}/package.json`) as { version: string }).version;
    expect(installed, `@apollo/gateway ${installed} is installed; gateway/query-plan-executor was forked from ${FORKED_FROM.version}: `
      + 'diff dist/executeQueryPlan.js, dist/resultShaping.js and the executor of dist/index.js, carry the changes over, then bump FORKED_FROM').toBe(FORKED_FROM.version);
  });
});
