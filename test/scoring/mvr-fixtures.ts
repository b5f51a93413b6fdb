/** MVR reports of both providers, as in spec/mvr-formats.md, for the scoring tests. */

export const sourceAFull = () => ({
  id: 'mvr_7f3a9c',
  object: 'motor_vehicle_report',
  report_type: 'full',
  full_name: 'Dana Reyes',
  license_number: 'D1234567',
  license_state: 'CA',
  license_status: 'VALID',
  license_class: 'C',
  issued_date: '2021-04-02',
  first_issued_date: '2009-07-15',
  expiration_date: '2026-04-02',
  restrictions: ['corrective lenses'],
  endorsements: [] as string[],
  violations: [
    { type: 'Speeding', description: 'Speeding 11-15 over', acd_code: 'S93', violation_date: '2024-05-01', conviction_date: '2024-06-10', state: 'CA', points: 1 },
  ] as Record<string, unknown>[],
  accidents: [
    { accident_date: '2023-11-20', description: 'Rear-end collision', at_fault: true, injuries: false, fatalities: false, state: 'CA' },
  ] as Record<string, unknown>[],
  suspensions: [
    { acd_code: 'D35', description: 'Failure to pay child support', start_date: '2019-01-05', end_date: '2019-03-01' },
  ] as Record<string, unknown>[],
  created_at: '2026-10-02T17:04:11Z',
});

export const sourceALight = () => ({ id: 'mvr_1b2c', object: 'motor_vehicle_report', report_type: 'light', result: 'clear' });

export const sourceBFull = () => ({
  reportId: 'SB-2026-000481',
  reportKind: 'FULL',
  orderedAt: '2026-10-02T17:04:11Z',
  driver: { firstName: 'Dana', lastName: 'Reyes', dateOfBirth: '1988-02-11' },
  license: {
    number: 'R200-4417-9921', jurisdiction: 'IL', status: 'VALID', class: 'D',
    issueDate: '2022-02-11', originalIssueDate: '2006-03-01', expirationDate: '2026-02-11',
    restrictions: [] as string[], endorsements: [] as string[],
  } as Record<string, unknown>,
  events: [
    { eventType: 'CONVICTION', acdCode: 'A21', description: 'DUI - BAC .08 or more', eventDate: '2025-07-04', convictionDate: '2025-09-12', severity: 'MAJOR' },
    { eventType: 'ACCIDENT', eventDate: '2024-01-09', description: 'Intersection collision', atFault: false, injury: true },
    { eventType: 'WITHDRAWAL', acdCode: 'A21', eventDate: '2025-09-12', endDate: '2026-03-12', description: 'Suspension - DUI' },
  ] as Record<string, unknown>[],
});

export const sourceBLight = () => ({ reportId: 'SB-2026-000482', reportKind: 'PASS_FAIL', outcome: 'PASS' });

/** A Source A report with nothing on it, first issued `firstIssued`. */
export const sourceAClean = (firstIssued = '2004-03-01') => ({
  ...sourceAFull(), id: 'mvr_clean', first_issued_date: firstIssued, violations: [], accidents: [], suspensions: [],
});
