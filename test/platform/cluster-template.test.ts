/**
 * The prepared PGlite cluster (initdb's result, made once and cached): made when missing or cut
 * short, read afterwards, other versions removed, and a cluster loaded from it is a working, persistent one.
 */
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterTemplate, prepareClusterTemplate } from '../../subgraphs/platform/db/cluster-template.ts';

let folder: string;
beforeAll(async () => { folder = await mkdtemp(join(tmpdir(), 'frg-template-')); });
afterAll(async () => { await rm(folder, { recursive: true, force: true }); });

describe('PGlite cluster template', () => {
  it('is made once into its folder, named by the PGlite version, then read; other versions are removed', async () => {
    const cache = join(folder, 'cache');
    const first = await clusterTemplate(cache);
    const [name] = await readdir(cache);
    expect(name).toMatch(/^pglite-\d+\.\d+\.\d+-cluster\.tar$/);
    const made = await stat(join(cache, name));
    expect(made.size).toBe(first.size);

    await writeFile(join(cache, 'pglite-0.0.1-cluster.tar'), 'old');
    expect(await prepareClusterTemplate(cache)).toBe(join(cache, name));
    expect(await readdir(cache)).toEqual([name]);
    // Read, not made again: the same file, untouched.
    const again = await clusterTemplate(cache);
    expect(Buffer.from(await again.arrayBuffer()).equals(Buffer.from(await first.arrayBuffer()))).toBe(true);
    expect((await stat(join(cache, name))).mtimeMs).toBe(made.mtimeMs);

    // A file that is no whole tarball (cut short) is made again rather than handed to PGlite.
    await writeFile(join(cache, name), 'cut short');
    expect((await clusterTemplate(cache)).size).toBe(first.size);
    expect((await stat(join(cache, name))).size).toBe(first.size);
  }, 240_000);

  it('gives a folder cluster that takes writes and keeps them across a reopen', async () => {
    const dataDir = join(folder, 'cluster');
    const loaded = await PGlite.create({ dataDir, loadDataDir: await clusterTemplate(join(folder, 'cache')) });
    await loaded.exec(`create schema s; create table s.t (x int); insert into s.t values (42);`);
    await loaded.close();
    const reopened = await PGlite.create({ dataDir });
    expect((await reopened.query<{ x: number }>('select x from s.t')).rows).toEqual([{ x: 42 }]);
    await reopened.close();
  }, 120_000);
});
