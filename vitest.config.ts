import { defineConfig } from 'vitest/config';

/**
 * The areas' folders whose files share a worker's loaded modules (`isolate: false`): a file there
 * starts its stack in a process that has already imported and warmed the gateway, the subgraphs
 * and PGlite, instead of paying for that in a fresh process per file. Their files keep no state
 * outside their own stack (no vi.mock, no process.env writes, no module-level singletons they
 * change); most of them also share one stack per worker (test/support/shared-stack.ts).
 */
export const SHARED_WORKER_FOLDERS = ['test/booking', 'test/scoring', 'test/registration', 'test/roadside'];
const sharedWorker = SHARED_WORKER_FOLDERS.map((folder) => `${folder}/**/*.test.ts`);

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    // Through Vite like the project's files, so that it meets the same copy of graphql (index.mjs) as they do.
    server: { deps: { inline: ['@graphql-inspector/core'] } },
    projects: [
      {
        extends: true,
        test: {
          name: 'areas', include: sharedWorker, isolate: false, globalSetup: ['test/support/shared-stack-setup.ts'],
        },
      },
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: sharedWorker } },
    ],
  },
});
