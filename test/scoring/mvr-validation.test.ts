import { describe, expect, it } from 'vitest';
import { AppError } from '../../subgraphs/platform/errors.ts';
import { classifyAcd } from '../../subgraphs/scoring/mvr/acd.ts';
import { parseReportText, validateReport } from '../../subgraphs/scoring/mvr/validate.ts';
import type { MvrSource } from '../../subgraphs/scoring/mvr/summary.ts';
import { sourceAFull, sourceALight, sourceBFull, sourceBLight } from './mvr-fixtures.ts';

/** The AppError a call throws (fails the test when it does not throw one). */
function errorOf(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error('expected an AppError');
}

describe('Source A schema', () => {
  it('accepts the full report of the spec, extra fields included, and normalises it', () => {
    const { summary } = validateReport('SOURCE_A', { ...sourceAFull(), vendor_extra: { nested: [1, 2] } });
    expect(summary.source).toBe('SOURCE_A');
    expect(summary.providerReportId).toBe('mvr_7f3a9c');
    expect(summary.license).toMatchObject({ status: 'VALID', state: 'CA', licenseClass: 'C', firstIssueDate: '2009-07-15', restrictions: ['corrective lenses'] });
    expect(summary.violations).toEqual([expect.objectContaining({ acdCode: 'S93', category: 'SPEEDING', severity: 'MINOR', severityBasis: 'ACD', date: '2024-05-01', convictionDate: '2024-06-10' })]);
    expect(summary.accidents).toEqual([expect.objectContaining({ date: '2023-11-20', atFault: true, injuries: false })]);
    expect(summary.withdrawals).toEqual([expect.objectContaining({ acdCode: 'D35', startDate: '2019-01-05', endDate: '2019-03-01' })]);
  });

  it('maps NOT VALID and keeps a null at_fault as unknown fault', () => {
    const report = { ...sourceAFull(), license_status: 'NOT VALID', accidents: [{ accident_date: '2024-01-01', at_fault: null }] };
    const { summary } = validateReport('SOURCE_A', report);
    expect(summary.license.status).toBe('NOT_VALID');
    expect(summary.accidents[0].atFault).toBeNull();
  });

  it('refuses the light report, and a report without its sections, saying a full MVR is required', () => {
    for (const light of [sourceALight(), { ...sourceAFull(), report_type: 'LIGHT' }, { ...sourceAFull(), violations: undefined }, { id: 'x', license_status: 'VALID' }]) {
      const error = errorOf(() => validateReport('SOURCE_A', JSON.parse(JSON.stringify(light))));
      expect(error.code).toBe('BAD_USER_INPUT');
      expect(error.message).toMatch(/full MVR is required/);
      expect(error.extensions.reason).toBe('LIGHT_MVR');
    }
  });

  it('refuses malformed reports naming the offending path', () => {
    const cases: [unknown, string][] = [
      [{ ...sourceAFull(), violations: 'none' }, 'report.violations'],
      [{ ...sourceAFull(), accidents: [{ accident_date: '2023-02-30' }] }, 'report.accidents[0].accident_date'],
      [{ ...sourceAFull(), accidents: [{ accident_date: '2023-02-01', at_fault: 'yes' }] }, 'report.accidents[0].at_fault'],
      [{ ...sourceAFull(), violations: [{ acd_code: 'S93' }] }, 'report.violations[0]'],
      [{ ...sourceAFull(), violations: [{ violation_date: 5 }] }, 'report.violations[0].violation_date'],
      [{ ...sourceAFull(), violations: [{ acd_code: 17, violation_date: '2024-01-01' }] }, 'report.violations[0].acd_code'],
      [{ ...sourceAFull(), license_status: 3 }, 'report.license_status'],
      [{ ...sourceAFull(), suspensions: [{ end_date: '2020-01-01' }] }, 'report.suspensions[0].start_date'],
    ];
    for (const [report, field] of cases) {
      const error = errorOf(() => validateReport('SOURCE_A', report));
      expect(error.code).toBe('BAD_USER_INPUT');
      expect(error.extensions.field, JSON.stringify(report).slice(0, 80)).toBe(field);
      expect(error.message).toContain(field);
      expect(error.message).not.toMatch(/full MVR is required/);
    }
  });
});

describe('Source B schema', () => {
  it('accepts the full report of the spec and normalises its events', () => {
    const { summary } = validateReport('SOURCE_B', { ...sourceBFull(), vendorExtra: true });
    expect(summary.license).toMatchObject({ status: 'VALID', state: 'IL', firstIssueDate: '2006-03-01' });
    expect(summary.violations).toEqual([expect.objectContaining({ acdCode: 'A21', category: 'ALCOHOL_DRUGS', severity: 'MAJOR', severityBasis: 'REPORTED', date: '2025-07-04' })]);
    expect(summary.accidents).toEqual([expect.objectContaining({ date: '2024-01-09', atFault: false, injuries: true })]);
    expect(summary.withdrawals).toEqual([expect.objectContaining({ acdCode: 'A21', startDate: '2025-09-12', endDate: '2026-03-12' })]);
  });

  it('uses the ACD code when severity is absent, and keeps unknown codes classed by first letter', () => {
    const report = sourceBFull();
    report.events = [
      { eventType: 'CONVICTION', acdCode: 's95', eventDate: '2025-01-01' },
      { eventType: 'CONVICTION', acdCode: 'M99', eventDate: '2025-01-01' },
      { eventType: 'CONVICTION', acdCode: 'Q12', eventDate: '2025-01-01' },
      { eventType: 'CONVICTION', acdCode: 'A99', eventDate: '2025-01-01' },
      { eventType: 'CONVICTION', acdCode: 'E01', eventDate: '2025-01-01', severity: 'minor' },
      { eventType: 'SOMETHING_NEW', eventDate: '2025-01-01' },
    ];
    const { summary } = validateReport('SOURCE_B', report);
    expect(summary.violations.map((v) => [v.acdCode, v.category, v.severity, v.moving])).toEqual([
      ['S95', 'SPEEDING', 'SERIOUS', true],
      ['M99', 'MANEUVERS', 'MINOR', true],
      ['Q12', 'UNCLASSIFIED', 'MINOR', true],
      ['A99', 'ALCOHOL_DRUGS', 'MAJOR', true],
      ['E01', 'EQUIPMENT', 'MINOR', false],
    ]);
    expect(classifyAcd('W12')).toMatchObject({ code: 'W12', letter: 'W', category: 'WITHDRAWAL', moving: false });
    expect(classifyAcd('B01')).toMatchObject({ category: 'DUTIES_FAILED', severity: 'MAJOR' });
  });

  it('refuses the pass/fail report and one without license or events', () => {
    for (const light of [sourceBLight(), { ...sourceBFull(), reportKind: 'pass_fail' }, { reportId: 'x', license: sourceBFull().license }]) {
      const error = errorOf(() => validateReport('SOURCE_B', light));
      expect(error.message).toMatch(/full MVR is required/);
      expect(error.extensions.reason).toBe('LIGHT_MVR');
    }
  });

  it('refuses malformed reports naming the offending path', () => {
    const cases: [unknown, string][] = [
      [{ ...sourceBFull(), events: {} }, 'report.events'],
      [{ ...sourceBFull(), license: 'VALID' }, 'report.license'],
      [{ ...sourceBFull(), license: { number: 'x' } }, 'report.license.status'],
      [{ ...sourceBFull(), events: [{ eventType: 'ACCIDENT', eventDate: '2024-13-01' }] }, 'report.events[0].eventDate'],
      [{ ...sourceBFull(), events: [{ eventType: 'ACCIDENT' }] }, 'report.events[0].eventDate'],
      [{ ...sourceBFull(), driver: { dateOfBirth: 19880211 } }, 'report.driver.dateOfBirth'],
    ];
    for (const [report, field] of cases) {
      const error = errorOf(() => validateReport('SOURCE_B', report));
      expect(error.extensions.field).toBe(field);
      expect(error.extensions.reason).toBe('INVALID_REPORT');
    }
  });
});

describe('either source', () => {
  it('refuses anything that is not a JSON object as invalid, not light', () => {
    for (const source of ['SOURCE_A', 'SOURCE_B'] as MvrSource[]) {
      for (const value of [null, [], 'text', 42]) {
        const error = errorOf(() => validateReport(source, value));
        expect(error.extensions).toMatchObject({ field: 'report', reason: 'INVALID_REPORT' });
      }
    }
  });

  it('reports invalid JSON text without echoing its content', () => {
    const error = errorOf(() => parseReportText('{"license_number": "D1234567", "violations": [}'));
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error.extensions).toMatchObject({ field: 'report', reason: 'INVALID_JSON' });
    expect(error.message).toMatch(/not valid JSON/);
    expect(error.message).not.toContain('D1234567');
  });
});
