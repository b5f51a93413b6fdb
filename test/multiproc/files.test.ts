import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileAtomically, readOrCreateFile } from '../../subgraphs/platform/fs/atomic-file.ts';
import { lockDataDir } from '../../subgraphs/platform/db/data-dir-lock.ts';
import { StartRefused } from '../../subgraphs/platform/start-refused.ts';

let dir: string;
beforeEach(async () => { dir = await mkdtemp(join(tmpdir(), 'frg-files-')); });
afterEach(async () => { await rm(dir, { recursive: true, force: true }); });

describe('atomic key files', () => {
  it('gives 50 concurrent creators one whole file, and leaves no temporary file behind', async () => {
    const path = join(dir, 'keys', 'key.pem');
    const texts = await Promise.all(Array.from({ length: 50 }, (_, i) => readOrCreateFile(path, () => `key-${i}-${'x'.repeat(4096)}\n`)));
    expect(new Set(texts).size).toBe(1);
    expect(texts[0]).toMatch(/^key-\d+-x{4096}\n$/);
    expect(await readdir(join(dir, 'keys'))).toEqual(['key.pem']);
    expect(await createFileAtomically(path, 'other')).toBe(false);
    expect(await readFile(path, 'utf8')).toBe(texts[0]);
  });
});

describe('the embedded data folder lock', () => {
  const lockPath = () => join(dir, 'owner.lock');

  it('names this process while held, is shared within it, and is removed on the last release', async () => {
    const first = await lockDataDir(dir);
    const second = await lockDataDir(dir);
    expect(JSON.parse(await readFile(lockPath(), 'utf8'))).toMatchObject({ pid: process.pid, host: hostname() });
    await first();
    expect(existsSync(lockPath())).toBe(true);
    await second();
    expect(existsSync(lockPath())).toBe(false);
  });

  it('refuses a folder held by another live process, naming it, and writes nothing', async () => {
    const owner = { pid: process.ppid, host: hostname(), startedAt: '2026-01-01T00:00:00.000Z', command: 'gateway/server.ts' };
    await writeFile(lockPath(), JSON.stringify(owner));
    const before = await readdir(dir);
    const refusal = await lockDataDir(dir).then(() => null, (error: unknown) => error);
    expect(refusal).toBeInstanceOf(StartRefused);
    expect((refusal as Error).message).toContain(`process ${process.ppid} on ${hostname()}`);
    expect((refusal as Error).message).toMatch(/npm run clients/);
    expect(await readdir(dir)).toEqual(before);
    expect(JSON.parse(await readFile(lockPath(), 'utf8'))).toEqual(owner);
  });

  it('takes over the lock of a process that is gone', async () => {
    await writeFile(lockPath(), JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), startedAt: 'x', command: 'dead' }));
    const release = await lockDataDir(dir);
    expect(JSON.parse(await readFile(lockPath(), 'utf8')).pid).toBe(process.pid);
    await release();
  });
});
