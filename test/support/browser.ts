/**
 * A headless Chromium for browser tests, with nothing to install beyond `npm install`: the Chromium
 * build shipped (brotli-compressed) inside the `@sparticuz/chromium` package is inflated once into
 * node_modules/.cache and driven by playwright-core. Where the machine lacks a shared library it
 * links against (NSS, NSPR, expat), the libraries the same package ships for AWS Lambda
 * (bin/al2023.tar.br) are inflated next to it and put on LD_LIBRARY_PATH; the fonts it ships
 * (bin/fonts.tar.br) are added to the system's, so text renders on a machine without fonts.
 * CHROMIUM_PATH points at another build instead.
 */
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { chmod, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { createBrotliDecompress } from 'node:zlib';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { extract } from 'tar';

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

interface PackagedBuild {
  /** Folder of the package's compressed files (chromium.br, al2023.tar.br, fonts.tar.br). */
  source: string;
  /** Folder under node_modules/.cache that holds what was inflated from them. */
  target: string;
}

function packagedBuild(): PackagedBuild {
  const require = createRequire(import.meta.url);
  let manifest: string;
  try {
    // The package exports only its entry point (build/index.js): its folder is one up from there.
    manifest = join(dirname(require.resolve(PACKAGE)), '..', 'package.json');
  } catch {
    throw new MissingPrerequisite(`The npm package ${PACKAGE} (the Chromium build the browser tests use) is not installed`, 'npm install');
  }
  const { version } = require(manifest) as { version: string };
  return { source: join(dirname(manifest), 'bin'), target: join(CACHE, `sparticuz-chromium-${version}`) };
}

function packagedFile(build: PackagedBuild, name: string): string {
  const file = join(build.source, name);
  if (!existsSync(file)) throw new MissingPrerequisite(`${file} is missing from the ${PACKAGE} package`, `rm -rf node_modules/${PACKAGE} && npm install`);
  return file;
}

/**
 * Inflates `name` (brotli; a tar archive when `tar`) from the package to `target/output`, once.
 * Written beside the target and renamed into place, so parallel test files may race.
 */
async function inflateOnce(build: PackagedBuild, name: string, output: string, tar: boolean): Promise<string> {
  const path = join(build.target, output);
  if (existsSync(path)) return path;
  const source = packagedFile(build, name);
  await mkdir(build.target, { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  try {
    if (tar) {
      await mkdir(partial);
      await pipeline(createReadStream(source), createBrotliDecompress(), extract({ cwd: partial, strict: true }));
    } else {
      await pipeline(createReadStream(source), createBrotliDecompress(), createWriteStream(partial));
      await chmod(partial, 0o755);
    }
    await rename(partial, path).catch((error: NodeJS.ErrnoException) => {
      // Another process won the race for a folder: its copy is as good as ours.
      if (!(existsSync(path) && (error.code === 'ENOTEMPTY' || error.code === 'EEXIST'))) throw error;
    });
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  return path;
}

/** The packaged Chromium binary, inflated on first use. */
async function packagedChromium(): Promise<string> {
  return inflateOnce(packagedBuild(), 'chromium.br', 'chromium', false);
}

/** The folder of shared libraries the package ships for Lambda (NSS, NSPR, expat), inflated on first use. */
export async function packagedLibraries(): Promise<string> {
  return join(await inflateOnce(packagedBuild(), 'al2023.tar.br', 'al2023', true), 'lib');
}

/**
 * A fontconfig file that adds the fonts the package ships to the system's own configuration (or
 * stands alone with `systemFonts: false`, which is how a machine without fonts sees it).
 */
export async function packagedFontsConfig({ systemFonts = true } = {}): Promise<string> {
  const build = packagedBuild();
  const fonts = join(await inflateOnce(build, 'fonts.tar.br', 'fonts', true), 'fonts');
  const file = join(build.target, systemFonts ? 'fonts.conf' : 'fonts-only-packaged.conf');
  const include = systemFonts ? '  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n' : '';
  // Written whole and renamed into place: a parallel launch never reads half a file.
  const partial = `${file}.${process.pid}.partial`;
  await writeFile(partial, `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n${include}  <dir>${fonts}</dir>\n  <cachedir>${join(build.target, 'fonts-cache')}</cachedir>\n</fontconfig>\n`);
  await rename(partial, file);
  return file;
}

/** Shared libraries the binary needs that the dynamic loader cannot find with `env` (empty where ldd is unavailable). */
export async function missingLibraries(binary: string, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const output = await promisify(execFile)('ldd', [binary], { env }).then((r) => r.stdout, () => '');
  return [...output.matchAll(/^\s*(\S+) => not found/gm)].map((m) => m[1]!);
}

/**
 * The environment Chromium runs with: the packaged libraries on LD_LIBRARY_PATH when the machine
 * lacks some of them (a MissingPrerequisite naming the apt-get line when even they do not cover it),
 * and the packaged fonts beside the system's.
 */
export async function chromiumEnvironment(executablePath: string, { systemFonts = true } = {}): Promise<NodeJS.ProcessEnv> {
  const env: NodeJS.ProcessEnv = { ...process.env, FONTCONFIG_FILE: await packagedFontsConfig({ systemFonts }) };
  let missing = await missingLibraries(executablePath, env);
  if (missing.length) {
    env.LD_LIBRARY_PATH = [await packagedLibraries(), env.LD_LIBRARY_PATH].filter(Boolean).join(':');
    missing = await missingLibraries(executablePath, env);
  }
  if (missing.length) {
    const packages = [...new Set(missing.map((lib) => LIBRARY_PACKAGES[lib] ?? `<the package providing ${lib}>`))];
    throw new MissingPrerequisite(`Chromium (${executablePath}) needs shared libraries this machine lacks: ${missing.join(', ')}`, `apt-get install -y ${packages.join(' ')}`);
  }
  return env;
}

/** The Chromium binary the tests drive: CHROMIUM_PATH, else the packaged build. */
export async function chromiumExecutable(): Promise<string> {
  const executablePath = process.env.CHROMIUM_PATH ?? await packagedChromium();
  if (!existsSync(executablePath)) throw new MissingPrerequisite(`CHROMIUM_PATH=${executablePath} does not exist`, 'unset CHROMIUM_PATH to use the Chromium from npm, or point it at a Chromium binary');
  return executablePath;
}

/** Launches headless Chromium with a fresh profile; a missing prerequisite throws MissingPrerequisite. */
export async function launchBrowser(options: { systemFonts?: boolean } = {}): Promise<Browser> {
  const executablePath = await chromiumExecutable();
  const env = await chromiumEnvironment(executablePath, options);
  // playwright-core gives every launch a fresh temporary --user-data-dir and removes it on close
  // (it refuses one passed in args).
  return chromium.launch({ executablePath, headless: true, args: ARGS, env });
}

/** A page that records every URL it requests and every Content-Security-Policy violation, in any of its frames. */
export interface WatchedPage { page: Page; requested: string[]; violations: string[] }

export async function watchedPage(browser: Browser | BrowserContext): Promise<WatchedPage> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } } as never);
  const requested: string[] = [];
  const violations: string[] = [];
  page.on('request', (request) => { requested.push(request.url()); });
  // Chromium logs each violation to the console; the DOM event also catches those a script swallows (eval in a try).
  page.on('console', (message) => { if (/Content Security Policy/i.test(message.text())) violations.push(message.text()); });
  await page.exposeFunction('reportCspViolation', (violation: string) => { violations.push(violation); });
  await page.addInitScript(`document.addEventListener('securitypolicyviolation', (e) => {
    window.reportCspViolation(e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline') + ' (' + e.sourceFile + ':' + e.lineNumber + ')');
  });`);
  return { page, requested, violations };
}
