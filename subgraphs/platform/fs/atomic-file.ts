import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** fsyncs a folder so a rename or link into it survives a crash. */
async function syncFolder(folder: string) {
  const handle = await open(folder, 'r');
  try { await handle.sync(); } finally { await handle.close(); }
}

/**
 * Creates `path` complete or not at all: the content is written to a temporary name in the same
 * folder, fsynced, then hard-linked to `path` (which fails when `path` exists) and the folder
 * fsynced. True when this call created it, false when it was already there: concurrent creators
 * agree on one whole file and a reader never sees a partial one.
 */
export async function createFileAtomically(path: string, content: string | Uint8Array, mode = 0o600): Promise<boolean> {
  const folder = dirname(path);
  await mkdir(folder, { recursive: true, mode: 0o700 });
  const temporary = join(folder, `.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temporary, 'wx', mode);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temporary, path);
    await syncFolder(folder);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    await rm(temporary, { force: true });
  }
}

/** The file's text, creating it first with `create()` when absent; every caller gets the same text. */
export async function readOrCreateFile(path: string, create: () => Promise<string> | string, mode = 0o600): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await createFileAtomically(path, await create(), mode);
  return readFile(path, 'utf8');
}
