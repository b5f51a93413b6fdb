import { acknowledgement, type BreakingChange } from './change.ts';

/**
 * The acknowledgements under CHANGELOG.md's `## [Unreleased]` heading: lines
 * `- BREAKING: <kind> <location>`, optionally followed by ` — <reason>`. Lines under a released
 * version do not count: a change acknowledged once is published with the baseline it updated.
 */
export function unreleasedAcknowledgements(changelog: string): Set<string> {
  const lines = changelog.split('\n');
  const start = lines.findIndex((line) => /^## \[Unreleased\]/i.test(line));
  if (start < 0) return new Set();
  const end = lines.findIndex((line, i) => i > start && line.startsWith('## '));
  return new Set(lines.slice(start + 1, end < 0 ? undefined : end)
    .filter((line) => line.startsWith('- BREAKING: '))
    .map((line) => line.split(' — ')[0].trimEnd()));
}

/** The breaking changes that CHANGELOG.md does not acknowledge. */
export function unacknowledged(changes: readonly BreakingChange[], changelog: string): BreakingChange[] {
  const acknowledged = unreleasedAcknowledgements(changelog);
  return changes.filter((change) => !acknowledged.has(acknowledgement(change)));
}
