import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

/**
 * The dependency rules of docs/architecture.md, checked on every relative import: the gateway and the
 * shared core (subgraphs/platform) import no area; an area imports the shared core, never the gateway nor
 * another area. Only the registry level (subgraphs/index.ts, subgraphs/events.ts) names the areas.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;

function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sources(path);
    return /\.(ts|js)$/.test(entry.name) ? [path] : [];
  });
}

/** Each file's relative imports, as paths from the repository's root. */
const importsOf = (file: string) => [...readFileSync(join(root, file), 'utf8').matchAll(SPECIFIER)]
  .map((m) => normalize(join(dirname(file), m[1]!)));

const areas = readdirSync(join(root, 'subgraphs'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && e.name !== 'platform').map((e) => e.name);
const areaOf = (path: string) => {
  const [top, area] = relative(root, join(root, path)).split('/');
  return top === 'subgraphs' && area && areas.includes(area) ? area : null;
};

it('finds the areas and their imports', () => {
  expect(areas).toEqual(expect.arrayContaining(['booking', 'scoring', 'roadside', 'registration', 'risk', 'webhooks']));
  expect(importsOf('gateway/rest/index.ts')).toContain('subgraphs/index.ts');
});

it('keeps the gateway and the shared core free of any area', () => {
  const crossings = [...sources('gateway'), ...sources('subgraphs/platform')]
    .flatMap((file) => importsOf(file).filter((target) => areaOf(target)).map((target) => `${file} -> ${target}`));
  expect(crossings).toEqual([]);
});

it('lets an area import the shared core and the event catalogue, never the gateway nor another area', () => {
  const crossings = areas.flatMap((area) => sources(`subgraphs/${area}`).flatMap((file) => importsOf(file)
    .filter((target) => target.startsWith('gateway/') || target === 'subgraphs/index.ts'
      || (areaOf(target) !== null && areaOf(target) !== area))
    .map((target) => `${file} -> ${target}`)));
  expect(crossings).toEqual([]);
});
