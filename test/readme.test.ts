/**
 * The configuration tables (docs/configuration.md, three tiers) list every variable the code reads:
 * the configuration schema's keys, each subgraph's <NAME>_URL, and any `process.env` / `env.` read in
 * the server and command sources (OpenTelemetry's own OTEL_* variables may be covered by one `OTEL_*`
 * row), each once. And they list nothing that is read nowhere. The README and docs/ link nothing
 * outside the repository.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configVariables, subgraphUrlVariable } from '../subgraphs/platform/config.ts';
import { subgraphList } from '../schema/subgraphs.ts';

const SOURCE_FOLDERS = ['gateway', 'subgraphs', 'schema'];
const ENV_READ = /\b(?:process\.)?env(?:\.([A-Z][A-Z0-9_]*)|\[\s*['"`]([A-Z][A-Z0-9_]*)['"`]\s*\])/g;
const OTEL_WILDCARD = 'OTEL_*';

async function variablesReadInSource(): Promise<Set<string>> {
  const found = new Set<string>();
  for (const folder of SOURCE_FOLDERS) {
    for (const file of await readdir(folder, { recursive: true })) {
      if (!file.endsWith('.ts') || file.endsWith('.test.ts')) continue;
      for (const match of (await readFile(join(folder, file), 'utf8')).matchAll(ENV_READ)) found.add(match[1] ?? match[2]);
    }
  }
  return found;
}

const TIERS = [
  '## What a deployment sets',
  '## Policies an operator may change',
  '## Tuning: dials only a measurement should move',
];

/** The backticked names in the first column of each tier's table in docs/configuration.md, in order, repeats kept. */
async function documentedByTier(): Promise<string[][]> {
  const page = await readFile('docs/configuration.md', 'utf8');
  return TIERS.map((heading) => {
    const start = page.indexOf(`\n${heading}\n`);
    if (start < 0) throw new Error(`docs/configuration.md has no "${heading}"`);
    const section = page.slice(start + 1);
    const end = section.indexOf('\n## ');
    const table = (end < 0 ? section : section.slice(0, end)).split('\n').filter((line) => line.startsWith('| `'));
    return table.flatMap((row) => [...row.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]*\*?)`/g)].map((m) => m[1]));
  });
}

async function documentedVariables(): Promise<Set<string>> {
  return new Set((await documentedByTier()).flat());
}

const covered = (documented: Set<string>, variable: string) =>
  documented.has(variable) || (variable.startsWith('OTEL_') && documented.has(OTEL_WILDCARD));

describe('configuration table (docs/configuration.md)', () => {
  it('lists every variable the code reads', async () => {
    const documented = await documentedVariables();
    const read = new Set([...configVariables, ...subgraphList().map((s) => subgraphUrlVariable(s.name)), ...await variablesReadInSource()]);
    expect([...read].filter((v) => !covered(documented, v)).sort()).toEqual([]);
  });

  it('lists no variable the code does not read', async () => {
    const read = new Set([...configVariables, ...subgraphList().map((s) => subgraphUrlVariable(s.name)), ...await variablesReadInSource()]);
    expect([...await documentedVariables()].filter((v) => !read.has(v) && !v.startsWith('OTEL_')).sort()).toEqual([]);
  });

  it('lists each variable once, in one of the three tiers, and every tier has some', async () => {
    const tiers = await documentedByTier();
    expect(tiers.map((names) => names.length > 0)).toEqual([true, true, true]);
    const names = tiers.flat();
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    expect(configVariables.filter((name) => !names.includes(name))).toEqual([]);
  });

  it('finds the reads it is meant to find', async () => {
    const read = await variablesReadInSource();
    // subgraphs/serve.ts reads process.env.SUBGRAPH, the clients command process.env.ADMIN_CLIENT_ID.
    expect([...read]).toEqual(expect.arrayContaining(['SUBGRAPH', 'ADMIN_CLIENT_ID', 'LOG_LEVEL']));
  });
});

const docPages = async () =>
  ['README.md', ...(await readdir('docs')).filter((f) => f.endsWith('.md')).map((f) => join('docs', f))];

describe('commands the README and docs/ name', () => {
  it('run scripts package.json has and files that exist', async () => {
    const { scripts } = JSON.parse(await readFile('package.json', 'utf8')) as { scripts: Record<string, string> };
    const missing: string[] = [];
    for (const page of await docPages()) {
      const text = await readFile(page, 'utf8');
      for (const [, script] of text.matchAll(/\bnpm run ([a-z][\w:-]*)/g)) {
        if (!(script in scripts)) missing.push(`${page}: npm run ${script}`);
      }
      const files = /\b(?:node|npx vitest run) ((?:gateway|subgraphs|test|schema)\/[\w./-]+\.ts)\b/g;
      for (const [, file] of text.matchAll(files)) {
        if (!existsSync(file)) missing.push(`${page}: ${file}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('README and docs/ links', () => {
  it('point at files inside the repository that exist', async () => {
    const pages = await docPages();
    const broken: string[] = [];
    for (const page of pages) {
      const text = await readFile(page, 'utf8');
      const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1])
        .concat([...text.matchAll(/`(\.\.\/[^`\s]+)`/g)].map((m) => m[1]));
      for (const target of targets) {
        if (/^(https?:|mailto:|#)/.test(target)) continue;
        const file = resolve(dirname(page), target.split('#')[0]);
        if (relative(process.cwd(), file).startsWith('..') || !existsSync(file)) broken.push(`${page}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});

/** GitHub's anchors of a Markdown page's headings (code blocks left out). */
async function headingAnchors(page: string): Promise<Set<string>> {
  const text = (await readFile(page, 'utf8')).replace(/```[\s\S]*?```/g, '');
  const anchor = (heading: string) => heading.trim().toLowerCase().replace(/[^\w\- ]/g, '').replaceAll(' ', '-');
  return new Set([...text.matchAll(/^#+ (.*)$/gm)].map((m) => anchor(m[1])));
}

describe('README and docs/ anchors', () => {
  it('point at headings that exist in the page they name', async () => {
    const broken: string[] = [];
    for (const page of await docPages()) {
      for (const [, target] of (await readFile(page, 'utf8')).matchAll(/\]\(([^)\s]*#[^)\s]+)\)/g)) {
        if (/^(https?:|mailto:)/.test(target)) continue;
        const [path, anchor] = target.split('#');
        const file = path === '' ? page : relative(process.cwd(), resolve(dirname(page), path));
        if (file.endsWith('.md') && !(await headingAnchors(file)).has(anchor)) broken.push(`${page}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
