/**
 * Breaking changes to the graph (@graphql-inspector/core over the supergraph's API schema) and their
 * acknowledgement in CHANGELOG.md; the committed baselines have none left unacknowledged.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { acknowledgement } from '../../schema/contract/change.ts';
import { unacknowledged, unreleasedAcknowledgements } from '../../schema/contract/changelog.ts';
import { acknowledged } from '../../schema/contract/gate.ts';
import { graphBreakingChanges } from '../../schema/contract/graph-diff.ts';

const supergraph = readFileSync(new URL('../../schema/supergraph.graphql', import.meta.url), 'utf8');
const vehicleField = '"""A vehicle of the caller\'s organisation, or null."""\n  vehicle(vin: VIN!): Vehicle @join__field(graph: BOOKING)';

describe('graph breaking changes', () => {
  it('rates a removed field as breaking, at its path', async () => {
    expect(supergraph).toContain(vehicleField);
    const changes = await graphBreakingChanges(supergraph, supergraph.replace(vehicleField, ''));
    expect(changes.map((c) => `${c.kind} ${c.location}`)).toEqual(['FIELD_REMOVED Query.vehicle']);
  });

  it('passes an added field and an added optional argument', async () => {
    const added = supergraph.replace(vehicleField, `${vehicleField.replace('(vin: VIN!)', '(vin: VIN!, at: String)')}\n  vehicleCount: Int @join__field(graph: BOOKING)`);
    expect(added).not.toBe(supergraph);
    expect(await graphBreakingChanges(supergraph, added)).toEqual([]);
  });

  it('rates a new required argument as breaking', async () => {
    const changes = await graphBreakingChanges(supergraph, supergraph.replace(vehicleField, vehicleField.replace('(vin: VIN!)', '(vin: VIN!, at: String!)')));
    expect(changes.map((c) => `${c.kind} ${c.location}`)).toEqual(['FIELD_ARGUMENT_ADDED Query.vehicle.at']);
  });
});

describe('CHANGELOG.md acknowledgements', () => {
  const removed = { kind: 'path-removed', location: '/users/{id}', message: '' };
  const narrowed = { kind: 'request-type-narrowed', location: 'POST /users request body.name', message: '' };
  const changelog = [
    '# Changelog', '', '## [Unreleased]', '', '### Removed', '',
    `${acknowledgement(removed)} — replaced by /people/{id}`, '- path-removed /users/{id} (not an acknowledgement: no BREAKING: prefix)', '',
    '## [1.0.0] - 2026-01-01', '', `${acknowledgement(narrowed)}`, '',
  ].join('\n');

  it('reads `- BREAKING: <kind> <location>` lines under Unreleased only, with an optional reason', () => {
    expect(acknowledgement(removed)).toBe('- BREAKING: path-removed /users/{id}');
    expect([...unreleasedAcknowledgements(changelog)]).toEqual(['- BREAKING: path-removed /users/{id}']);
    expect(unacknowledged([removed, narrowed], changelog)).toEqual([narrowed]);
    expect(unacknowledged([removed], '# Changelog\n')).toEqual([removed]);
  });

  it('the gate of `npm run openapi` and `npm run compose` refuses an unacknowledged change and prints the line to add', () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const logs = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(acknowledged('the REST contract', [removed, narrowed], changelog)).toBe(false);
      expect(errors.mock.calls.flat().join('\n')).toContain('\n- BREAKING: request-type-narrowed POST /users request body.name');
      expect(errors.mock.calls.flat().join('\n')).not.toContain('- BREAKING: path-removed');
      expect(acknowledged('the REST contract', [removed], changelog)).toBe(true);
      expect(acknowledged('the graph', [], '')).toBe(true);
      expect(logs.mock.calls.flat()).toEqual([
        'acknowledged breaking change to the REST contract: path-removed /users/{id} ()',
        'UNACKNOWLEDGED breaking change to the REST contract: request-type-narrowed POST /users request body.name ()',
        'acknowledged breaking change to the REST contract: path-removed /users/{id} ()',
      ]);
    } finally {
      errors.mockRestore();
      logs.mockRestore();
    }
  });

  it('the committed CHANGELOG.md has an Unreleased section', () => {
    expect(readFileSync(new URL('../../CHANGELOG.md', import.meta.url), 'utf8')).toMatch(/^## \[Unreleased\]$/m);
  });
});
