/**
 * `redocly lint` (@redocly/cli, redocly.yaml) over the published document: no errors and no warnings
 * beyond the exemptions in .redocly.lint-ignore.yaml. Offline: telemetry and the update check off.
 * baseline.test.ts keeps schema/openapi.json equal to the served document.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { parse } from 'yaml';

const root = new URL('../../', import.meta.url).pathname;
const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');

it('redocly lint: no errors, no warnings, only the documented exemptions ignored', { timeout: 120_000 }, async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [cli, 'lint', 'schema/openapi.json', '--format=json'], {
    cwd: root, maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  });
  const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number; ignored: number }; problems: { ruleId: string; message: string; location: { pointer: string }[] }[] };
  const exemptions = Object.values(parse(readFileSync(`${root}.redocly.lint-ignore.yaml`, 'utf8'))['schema/openapi.json'] as Record<string, string[]>).flat();
  expect(report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
  expect(report.totals).toEqual({ errors: 0, warnings: 0, ignored: exemptions.length });
});
