import { readFileSync, rmSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createFileAtomically } from '../fs/atomic-file.ts';
import { StartRefused } from '../start-refused.ts';

const LOCK_FILE = 'owner.lock';

interface Owner { pid: number; host: string; startedAt: string; command: string }

const alive = (pid: number) => {
  try { process.kill(pid, 0); return true; } catch (error) { return (error as NodeJS.ErrnoException).code === 'EPERM'; }
};

/** The lock of a process that is gone (same host, pid not running, or our own pid reused after a restart). */
const isStale = (owner: Owner | null, mine: Owner) =>
  owner !== null && owner.host === mine.host && (owner.pid === process.pid ? owner.startedAt !== mine.startedAt : !alive(owner.pid));

function parseOwner(text: string): Owner | null {
  try {
    const owner = JSON.parse(text) as Owner;
    return Number.isInteger(owner.pid) && typeof owner.host === 'string' ? owner : null;
  } catch {
    return null;
  }
}

/** Folders this process holds, with how many databases use each; released when the last one closes or the process exits. */
const held = new Map<string, { users: number; acquiring: Promise<void> }>();
const me: Owner = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString(), command: process.argv.slice(1).join(' ') };
const isMine = (text: string) => {
  const owner = parseOwner(text);
  return owner?.pid === me.pid && owner.host === me.host && owner.startedAt === me.startedAt;
};

process.once('exit', () => {
  for (const folder of held.keys()) {
    const path = join(folder, LOCK_FILE);
    try { if (isMine(readFileSync(path, 'utf8'))) rmSync(path); } catch { /* already gone */ }
  }
});

async function acquire(folder: string): Promise<void> {
  const path = join(folder, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await createFileAtomically(path, `${JSON.stringify(me)}\n`, 0o644)) return;
    const text = await readFile(path, 'utf8').catch(() => null);
    if (text === null) continue;
    const owner = parseOwner(text);
    if (isStale(owner, me)) { await rm(path, { force: true }); continue; }
    const who = owner ? `process ${owner.pid} on ${owner.host} (started ${owner.startedAt}: ${owner.command})` : 'another process';
    throw new StartRefused(
      `the embedded database folder ${folder} is in use by ${who}. One process owns a PGlite data folder: ` +
      'stop that process first, or manage API clients through it (`npm run clients` uses the running server), ' +
      'or give this process another DATA_DIR. To run several processes on one database, use PostgreSQL (DATABASE_URL). ' +
      `If that process is gone (for example on another machine sharing this folder), remove ${path}.`);
  }
  throw new StartRefused(`could not take the lock ${path} on the embedded database folder; remove it if no process uses ${folder}`);
}

/**
 * Takes this process's exclusive hold on a PGlite DATA_DIR (a lock file naming the process, created
 * atomically); another process holding it is refused with StartRefused, a dead one's lock is taken
 * over. Several databases of one process share the hold. Returns the release.
 */
export async function lockDataDir(folder: string): Promise<() => Promise<void>> {
  let entry = held.get(folder);
  if (!entry) {
    entry = { users: 0, acquiring: acquire(folder) };
    held.set(folder, entry);
    entry.acquiring.catch(() => held.delete(folder));
  }
  await entry.acquiring;
  entry.users += 1;
  let released = false;
  return async () => {
    if (released) return;
    released = true;
    entry.users -= 1;
    if (entry.users > 0 || held.get(folder) !== entry) return;
    held.delete(folder);
    const path = join(folder, LOCK_FILE);
    if (isMine(await readFile(path, 'utf8').catch(() => ''))) await rm(path, { force: true });
  };
}
