/**
 * The IDE's files, bundled by esbuild from the installed packages (GraphiQL 5, its explorer plugin,
 * React, Monaco and its workers) and the page's own sources in page/: at install time (the
 * postinstall's preparation, subgraphs/prepare-cli.ts) or, when that did not run, on the first IDE
 * visit. Kept in node_modules/.cache under a key of the packages' versions and the sources' contents,
 * so an upgrade or an edit makes a new bundle and nothing stale is ever served. Scripts and styles get a
 * brotli copy beside them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const brotli = promisify(zlib.brotliCompress);

const require = createRequire(import.meta.url);
const PAGE = fileURLToPath(new URL('./page/', import.meta.url));
const CACHE = fileURLToPath(new URL('../../node_modules/.cache/ide/', import.meta.url));
/** The packages whose code is in the bundle, and the bundler. */
export const BUNDLED_PACKAGES = ['graphiql', '@graphiql/react', '@graphiql/plugin-explorer', '@graphiql/toolkit', 'monaco-editor', 'monaco-graphql', 'react', 'react-dom', 'graphql-ws', 'esbuild'];

const version = (pkg: string) => (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version;

/** The bundle's key: what it is made of, and how. */
function bundleKey(): string {
  const hash = createHash('sha256');
  for (const pkg of BUNDLED_PACKAGES) hash.update(`${pkg}@${version(pkg)}\n`);
  for (const file of readdirSync(PAGE).sort()) hash.update(`${file}\n`).update(readFileSync(join(PAGE, file)));
  hash.update(readFileSync(fileURLToPath(import.meta.url)));
  return hash.digest('hex').slice(0, 16);
}

const monaco = (path: string) => require.resolve(`monaco-editor/esm/vs/${path}`);

async function build(folder: string) {
  // Loaded only to build: a start that finds the bundle never loads esbuild.
  const { build: esbuild } = await import('esbuild');
  await esbuild({
    entryPoints: {
      ide: join(PAGE, 'ide.js'),
      'editor.worker': monaco('editor/editor.worker.js'),
      'json.worker': monaco('language/json/json.worker.js'),
      'graphql.worker': require.resolve('monaco-graphql/esm/graphql.worker.js'),
    },
    outdir: folder, bundle: true, minify: true, format: 'iife', platform: 'browser', target: 'es2022',
    loader: { '.ttf': 'file' }, assetNames: '[name]-[hash]', legalComments: 'none', logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  // Brotli copies for browsers (about a fifth smaller than gzip), made once here rather than per process.
  await Promise.all(readdirSync(folder).filter((file) => /\.(js|css)$/.test(file)).map(async (file) => {
    const compressed = await brotli(await readFile(join(folder, file)), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9 } });
    await writeFile(join(folder, `${file}.br`), compressed);
  }));
}

/** Builds of earlier keys, and builds abandoned over an hour ago, go: each bundle is some 10 MB. */
async function removeStale(current: string) {
  const hourAgo = Date.now() - 3_600_000;
  await Promise.all(readdirSync(CACHE).map((name) => join(CACHE, name))
    .filter((path) => path !== current && (!path.endsWith('.tmp') || statSync(path).mtimeMs < hourAgo))
    .map((path) => rm(path, { recursive: true, force: true })));
}

let pending: Promise<string> | undefined;

/** The folder holding the current bundle, built first when it is not there. */
export function ideBundle(): Promise<string> {
  pending ??= (async () => {
    const folder = join(CACHE, bundleKey());
    if (existsSync(folder)) return folder;
    // Built aside and renamed in: a reader never sees half a bundle, and concurrent builders agree on one.
    const building = `${folder}.${randomBytes(4).toString('hex')}.tmp`;
    await mkdir(CACHE, { recursive: true });
    try {
      await build(building);
      await rename(building, folder).catch((error: NodeJS.ErrnoException) => {
        if (!existsSync(folder)) throw error;
      });
    } finally {
      await rm(building, { recursive: true, force: true });
    }
    await removeStale(folder);
    return folder;
  })();
  pending.catch(() => { pending = undefined; });
  return pending;
}
