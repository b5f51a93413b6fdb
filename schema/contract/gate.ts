import { readFileSync } from 'node:fs';
import { acknowledgement, type BreakingChange } from './change.ts';
import { unacknowledged } from './changelog.ts';

function readChangelog() {
  try { return readFileSync(new URL('../../CHANGELOG.md', import.meta.url), 'utf8'); } catch { return ''; }
}

/**
 * Prints the breaking changes from the baseline and whether CHANGELOG.md acknowledges each one;
 * true when every one is acknowledged (the baseline may then be updated).
 */
export function acknowledged(what: string, changes: readonly BreakingChange[], changelog = readChangelog()): boolean {
  const missing = new Set(unacknowledged(changes, changelog));
  for (const change of changes) console.log(`${missing.has(change) ? 'UNACKNOWLEDGED' : 'acknowledged'} breaking change to ${what}: ${change.kind} ${change.location} (${change.message})`);
  if (missing.size) {
    console.error(`${missing.size} breaking change(s) to ${what} are not acknowledged. If they are intended, add under \`## [Unreleased]\` in CHANGELOG.md:\n${[...missing].map(acknowledgement).join('\n')}`);
  }
  return missing.size === 0;
}
