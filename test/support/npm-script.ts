import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The project's root folder (this checkout's). */
export const ROOT = join(import.meta.dirname, '../..');

/**
 * package.json's script `name` in `root` (default this checkout): the variables it sets, then
 * `node`'s arguments, e.g. `MALLOC_ARENA_MAX=2 node --import ./gateway/compile-cache.ts gateway/server.ts`.
 */
export function npmScript(name: string, root = ROOT): { env: Record<string, string>; argv: string[] } {
  const scripts = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const words = scripts[name]!.split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_]+=/.test(words[0]!)) {
    const word = words.shift()!;
    env[word.slice(0, word.indexOf('='))] = word.slice(word.indexOf('=') + 1);
  }
  return { env, argv: words };
}

/** `npm start`'s command in `root`: its variables, and node's arguments (flags, preloads, the script). */
export function npmStart(root = ROOT): { env: Record<string, string>; args: string[] } {
  const { env, argv } = npmScript('start', root);
  if (argv[0] !== 'node') throw new Error(`npm start runs ${argv[0]}, not node`);
  return { env, args: argv.slice(1) };
}
