/**
 * An earlier revision of this repository, to run beside this one in a benchmark: `git archive <rev>`
 * into a temporary folder, with this checkout's `node_modules` linked in (the revision's own
 * dependencies may be older; a benchmark names what it ran). `remove()` deletes the folder.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface Revision { commit: string; root: string; remove(): Promise<void> }

export const commitOf = async (rev: string) => (await run('git', ['rev-parse', '--verify', `${rev}^{commit}`])).stdout.trim();

export async function revisionOf(rev: string): Promise<Revision> {
  const commit = await commitOf(rev);
  const root = await mkdtemp(join(tmpdir(), `frg-${commit.slice(0, 7)}-`));
  try {
    const tar = `${root}.tar`;
    await run('git', ['archive', '-o', tar, commit]);
    await run('tar', ['-xf', tar, '-C', root]).finally(() => rm(tar, { force: true }));
    await symlink(resolve('node_modules'), join(root, 'node_modules'));
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  return { commit, root, remove: () => rm(root, { recursive: true, force: true }) };
}
