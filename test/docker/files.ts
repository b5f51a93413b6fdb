/**
 * docker-compose.yml, the Dockerfile and package.json's start script, read as their tools read them
 * (no Docker engine runs where the tests do): the compose file with a YAML parser (merge keys on, as
 * compose has them) and compose's `${VAR}` interpolation; the Dockerfile's instructions with their
 * line continuations; `npm start`'s command split into its environment, node flags and script.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { ROOT } from '../support/npm-script.ts';

export { npmScript, ROOT } from '../support/npm-script.ts';

export interface Service {
  build?: unknown;
  image?: string;
  command?: string[];
  env_file?: string | (string | { path: string })[];
  environment?: Record<string, string>;
  ports?: string[];
  stop_grace_period?: string;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, unknown>;
}

export const composeFile = () =>
  parse(readFileSync(join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };

/** The services run from this project's image (not postgres, redis). */
export const ownServices = () => Object.entries(composeFile().services).filter(([, s]) => s.build !== undefined);

/** Compose's interpolation: ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error}, ${VAR?error}, $$. */
export function interpolate(text: string, env: Record<string, string | undefined>): string {
  return text.replace(/\$\$|\$\{([A-Z0-9_]+)(?:(:?)([-?])([^}]*))?\}/g, (whole, name: string | undefined, colon, kind, arg: string) => {
    if (!name) return '$';
    const value = env[name];
    const missing = value === undefined || (colon === ':' && value === '');
    if (!missing) return value;
    if (kind === '?') throw new Error(`${name}: ${arg}`);
    return kind === '-' ? arg : '';
  });
}

/** Compose's durations as stop_grace_period takes them: 1m30s, 45s, 500ms. */
export function durationMs(text: string): number {
  const units: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.map((p) => p[0]).join('') !== text) throw new Error(`not a duration: ${text}`);
  return parts.reduce((sum, [, n, unit]) => sum + Number(n) * units[unit], 0);
}

/** The Dockerfile's instructions, in order: [INSTRUCTION, its arguments] with continuations joined. */
export function dockerfile(): [string, string][] {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n(\s*#.*\n)*/g, ' ');
  return text.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const [, instruction, args] = /^(\S+)\s+(.*)$/.exec(line)!;
      return [instruction.toUpperCase(), args];
    });
}

/** Variables set by the Dockerfile's ENV lines (KEY=value forms). */
export function dockerfileEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [, args] of dockerfile().filter(([i]) => i === 'ENV')) {
    for (const [, key, value] of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)/g)) env[key] = value.replace(/^"|"$/g, '');
  }
  return env;
}
