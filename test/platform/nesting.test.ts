import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../subgraphs/platform/config.ts';
import { documentTooDeep, jsonTextTooDeep, jsonValueTooDeep } from '../../subgraphs/platform/nesting.ts';
import { ORGANISATION_PATTERN, parseOrganisation } from '../../subgraphs/platform/organisation.ts';

const nested = (depth: number): unknown => (depth === 0 ? 1 : [nested(depth - 1)]);

describe('nesting bounds', () => {
  it('JSON text: counts brackets outside strings only', () => {
    expect(jsonTextTooDeep(JSON.stringify(nested(64)), 64)).toBe(false);
    expect(jsonTextTooDeep(JSON.stringify(nested(65)), 64)).toBe(true);
    expect(jsonTextTooDeep(`{"a":"${'['.repeat(1_000)}"}`, 64)).toBe(false);
    expect(jsonTextTooDeep(`{"a":"\\"${'{'.repeat(100)}"}`, 64)).toBe(false);
    expect(jsonTextTooDeep(`${'{"a":'.repeat(3_000)}1${'}'.repeat(3_000)}`, 64)).toBe(true);
    // Siblings do not add up.
    expect(jsonTextTooDeep(JSON.stringify(Array.from({ length: 1_000 }, () => nested(10))), 64)).toBe(false);
  });

  it('parsed values: walked without recursion, even 100,000 deep', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i += 1) deep = { a: deep };
    expect(jsonValueTooDeep(deep, 64)).toBe(true);
    expect(jsonValueTooDeep(nested(64), 64)).toBe(false);
    expect(jsonValueTooDeep({ r: nested(63) }, 64)).toBe(false);
    expect(jsonValueTooDeep({ r: nested(64) }, 64)).toBe(true);
    expect(jsonValueTooDeep(undefined, 64)).toBe(false);
  });

  it('GraphQL documents: brackets outside strings, block strings and comments', () => {
    expect(documentTooDeep(`mutation { createMvr(report: ${'['.repeat(3_000)}${']'.repeat(3_000)}) { id } }`, 64)).toBe(true);
    expect(documentTooDeep(`{ a(x: "${'['.repeat(100)}") { b } }`, 64)).toBe(false);
    expect(documentTooDeep(`{ a(x: """ \\""" ${'{'.repeat(100)} """) { b } }`, 64)).toBe(false);
    expect(documentTooDeep(`# ${'('.repeat(100)}\n{ a { b } }`, 64)).toBe(false);
    expect(documentTooDeep(`${'{ a '.repeat(65)}${'}'.repeat(65)}`, 64)).toBe(true);
  });
});

describe('organisation names', () => {
  it('letters, digits, ".", "_" and "-", starting with a letter or digit, at most 64', () => {
    for (const name of ['default', 'org-a', 'org-webhooks-many', 'Acme_Fleet.EU', 'a', 'x'.repeat(64)]) expect(parseOrganisation(name), name).toBe(name);
    for (const name of ['', ' ', 'a\u0000b', '../etc', '.hidden', 'a/b', 'a b', 'tab\there', 'bell\u0007', 'é', 'x'.repeat(65), '-lead']) {
      expect(ORGANISATION_PATTERN.test(name), JSON.stringify(name)).toBe(false);
      expect(() => parseOrganisation(name), JSON.stringify(name)).toThrow(expect.objectContaining({ extensions: expect.objectContaining({ code: 'BAD_USER_INPUT', field: 'organisation' }) }));
    }
  });

  it('BOOTSTRAP_ORG is held to the same rule at start-up', () => {
    expect(loadConfig({ BOOTSTRAP_ORG: 'org-a' }).BOOTSTRAP_ORG).toBe('org-a');
    expect(loadConfig({}).BOOTSTRAP_ORG).toBe('default');
    for (const name of ['../etc', 'a\u0000b', 'x'.repeat(65)]) expect(() => loadConfig({ BOOTSTRAP_ORG: name }), name).toThrow(/BOOTSTRAP_ORG/);
  });
});
