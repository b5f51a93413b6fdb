import { readFile, readdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { createFileAtomically } from '../fs/atomic-file.ts';

/**
 * A new PGlite cluster starts from a prepared one instead of running initdb, which costs seconds of
 * CPU (most of a first start, and of every in-memory cluster the tests create). The result of
 * initdb is the same for every cluster of a PGlite version, so it is made once, kept as PGlite's
 * own tarball (`dumpDataDir`) under `node_modules/.cache/`, named by the PGlite version, and
 * loaded into each new cluster (`loadDataDir`). `npm install` prepares it; a start that finds none
 * makes it then. Where that folder cannot be written (a read-only install) the template is made
 * in memory for each new cluster, as costly as initdb was.
 */
const pgliteDir = dirname(dirname(fileURLToPath(import.meta.resolve('@electric-sql/pglite'))));
export const TEMPLATE_DIR = join(dirname(dirname(pgliteDir)), '.cache', 'fleet-risk-graph');

async function templateFile(folder: string) {
  const { version } = JSON.parse(await readFile(join(pgliteDir, 'package.json'), 'utf8')) as { version: string };
  return join(folder, `pglite-${version}-cluster.tar`);
}

async function makeTemplate(): Promise<Uint8Array> {
  const pglite = await PGlite.create();
  try {
    return new Uint8Array(await (await pglite.dumpDataDir('none')).arrayBuffer());
  } finally {
    await pglite.close();
  }
}

let making: Promise<Uint8Array> | undefined;

/** The tarball of a new cluster: read from the cache, or made (and cached when possible). */
export async function clusterTemplate(folder = TEMPLATE_DIR): Promise<Blob> {
  const file = await templateFile(folder);
  // Anything but a whole tarball (512-byte blocks) is replaced: the start makes one instead of failing.
  const cached = await readFile(file).catch(() => undefined);
  if (cached && cached.length >= 1024 && cached.length % 512 === 0) return new Blob([cached]);
  if (cached) await rm(file, { force: true });
  // One making per process (stacks built side by side in tests); processes that race agree on one file.
  making ??= makeTemplate().finally(() => { making = undefined; });
  const made = await making;
  await createFileAtomically(file, made, 0o644).catch(() => false);
  return new Blob([made]);
}

/** Makes the template if it is missing and removes those of other PGlite versions; run by `npm install`. */
export async function prepareClusterTemplate(folder = TEMPLATE_DIR) {
  const file = await templateFile(folder);
  await clusterTemplate(folder);
  const stale = (await readdir(folder).catch(() => [])).filter((name) => /^pglite-.*-cluster\.tar$/.test(name) && join(folder, name) !== file);
  await Promise.all(stale.map((name) => rm(join(folder, name), { force: true })));
  return file;
}
