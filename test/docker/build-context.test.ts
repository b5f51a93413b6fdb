/**
 * Issue 44: `COPY . .` must not put the operator's keys into the image. The build context is read
 * under .dockerignore as Docker reads it (./build-context.ts): of this checkout as it is on disk,
 * and of a copy with secrets planted where an operator's would be.
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildContext, secretLooking } from './build-context.ts';

const ROOT = join(import.meta.dirname, '../..');

describe('the build context of this checkout', () => {
  it('holds no secret-looking file, by name or by content', async () => {
    const files = await buildContext(ROOT);
    expect(await secretLooking(ROOT, files)).toEqual([]);
  });

  it('holds every tracked file the services run: package files, gateway/, subgraphs/, schema/', async () => {
    const files = new Set(await buildContext(ROOT));
    const tracked = execFileSync('git', ['ls-files', 'package.json', 'package-lock.json', 'gateway', 'subgraphs', 'schema'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n').filter(Boolean);
    expect(tracked.length).toBeGreaterThan(300);
    expect(tracked.filter((file) => !files.has(file))).toEqual([]);
    // Tests, docs and the checkout's own files stay out.
    expect([...files].filter((file) => /^(test|docs|node_modules|\.git)\//.test(file) || !file.includes('/') && !file.startsWith('package'))).toEqual([]);
  });
});

describe('secrets an operator leaves in the checkout', () => {
  const PLANTED: Record<string, string> = {
    '.env': "JWT_PRIVATE_KEY='-----BEGIN PRIVATE KEY-----\\nMC4CAQ...\\n-----END PRIVATE KEY-----'\n",
    'keys.env': 'INTERNAL_HOP_KEY=abcdefghijklmnopqrstuvwxyz0123456789\n',
    '.env.production': 'BOOTSTRAP_CLIENT_SECRET=0123456789abcdef0123\n',
    '.data/keys/jwt-private.pem': '-----BEGIN PRIVATE KEY-----\n',
    '.data/keys/mvr-encryption.key': 'c2VjcmV0\n',
    '.data/pglite/cluster/PG_VERSION': '17\n',
    'gateway/.env': 'MVR_ENCRYPTION_KEY=c2VjcmV0\n',
    'gateway/local.env': 'MVR_ENCRYPTION_KEY=c2VjcmV0\n',
    'subgraphs/scoring/.data/keys/mvr-encryption.key': 'c2VjcmV0\n',
    'schema/tls/server.key': '-----BEGIN EC PRIVATE KEY-----\n',
    'schema/tls/server.pem': 'cert\n',
    'subgraphs/.npmrc': '//registry/:_authToken=x\n',
    'gateway/id_ed25519': 'key\n',
    'gateway/notes.txt': "-----BEGIN PRIVATE KEY-----\n",
  };
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'frg-context-'));
    for (const [file, text] of Object.entries({ ...PLANTED, 'package.json': '{}', 'gateway/server.ts': '' })) {
      await mkdir(dirname(join(root, file)), { recursive: true });
      await writeFile(join(root, file), text);
    }
  });
  afterAll(async () => { await rm(root, { recursive: true, force: true }); });

  it('are all found by the check when nothing keeps them out', async () => {
    expect((await secretLooking(root, await buildContext(root))).sort()).toEqual(Object.keys(PLANTED).sort());
  });

  it('stay out of the context under .dockerignore, but for a key in a file of code, which the check finds', async () => {
    await copyFile(join(ROOT, '.dockerignore'), join(root, '.dockerignore'));
    const files = await buildContext(root);
    expect(files).toEqual(['gateway/notes.txt', 'gateway/server.ts', 'package.json']);
    expect(await secretLooking(root, files)).toEqual(['gateway/notes.txt']);
  });
});
