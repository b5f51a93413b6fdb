/**
 * What the Dockerfile's `COPY . .` copies: the files of a folder under its .dockerignore, read with
 * @balena/dockerignore (a port of Docker's own matcher), walked as Docker walks a build context:
 * symbolic links are entries of their own (never followed), and an excluded folder is entered only
 * when an exception (`!pattern`) could take back something under it.
 */
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Ignore } from '@balena/dockerignore';

// Its types declare an ES default export; the package is CommonJS and exports the function itself.
const ignore: () => Ignore = createRequire(import.meta.url)('@balena/dockerignore');

export async function buildContext(root: string): Promise<string[]> {
  const rules = await readFile(join(root, '.dockerignore'), 'utf8').catch(() => '');
  const matcher = ignore().add(rules);
  const exceptions = rules.split('\n').map((line) => line.trim()).filter((line) => line.startsWith('!'))
    .map((line) => line.slice(1).replace(/^\/+/, ''));
  const mayTakeBack = (folder: string) => exceptions.some((e) => e.startsWith(`${folder}/`) || e.startsWith('*'));
  const files: string[] = [];
  const walk = async (folder: string) => {
    for (const entry of await readdir(join(root, folder), { withFileTypes: true })) {
      const path = folder ? `${folder}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!matcher.ignores(path) || mayTakeBack(path)) await walk(path);
      } else if (!matcher.ignores(path)) files.push(path);
    }
  };
  await walk('');
  return files.sort();
}

const SECRET_NAMES = [
  /(^|\/)\.env(\.[^/]*)?$/, // .env, .env.local
  /\.env$/, // keys.env
  /(^|\/)\.data\//, // DATA_DIR's default: generated keys, PGlite's data
  /(^|\/)\.git\//, // history may hold what the tree no longer does
  /\.(pem|key|p12|pfx|jks)$/,
  /(^|\/)(\.npmrc|\.netrc|id_rsa|id_ecdsa|id_ed25519)[^/]*$/,
];
const SECRET_CONTENT = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
  // A line of `npm run keys`'s output, or of an environment file holding a secret.
  /^(JWT_PRIVATE_KEY|MVR_ENCRYPTION_KEY|MVR_ENCRYPTION_OLD_KEYS|INTERNAL_HOP_KEY|BOOTSTRAP_CLIENT_SECRET)=\S/m,
];

/** The files among `files` (relative to `root`) that look like secrets, by name or by what they hold. */
export async function secretLooking(root: string, files: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const file of files) {
    if (SECRET_NAMES.some((name) => name.test(file))) found.push(file);
    else {
      const text = await readFile(join(root, file), 'utf8').catch(() => '');
      if (SECRET_CONTENT.some((content) => content.test(text))) found.push(file);
    }
  }
  return found;
}
