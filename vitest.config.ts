import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
    // Through Vite like the project's files, so that it meets the same copy of graphql (index.mjs) as they do.
    server: { deps: { inline: ['@graphql-inspector/core'] } },
  },
});
