import { readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { dropTestDatabases } from './database.ts';

/**
 * globalSetup of the files that use sharedTestStack(): names this run's shared stacks, and after
 * the run removes what they leave behind, as their workers end without closing them: their data
 * folders and, on PostgreSQL, their databases.
 */
export default function setup(project: TestProject) {
  const label = `test_shared_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  project.provide('sharedStackLabel', label);
  return async () => {
    await dropTestDatabases(label);
    const folders = (await readdir(tmpdir())).filter((name) => name.startsWith(`${label}-`));
    await Promise.all(folders.map((name) => rm(join(tmpdir(), name), { recursive: true, force: true })));
  };
}
