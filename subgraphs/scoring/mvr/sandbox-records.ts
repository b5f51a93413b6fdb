import type { EntityManager } from '@mikro-orm/core';
import { inSandbox } from '../../platform/db/tenant.ts';
import { badInput } from '../../platform/errors.ts';
import type { Json } from './common.ts';
import type { MvrSource } from './summary.ts';

/** An offset before the request's UTC day: whole years and months. */
type Ago = { years?: number; months?: number };

/** The request's UTC day minus `ago`, as YYYY-MM-DD. */
export function daysAgo(today: Date, ago: Ago): string {
  const year = today.getUTCFullYear() - (ago.years ?? 0);
  const d = new Date(Date.UTC(year, today.getUTCMonth() - (ago.months ?? 0), 1));
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(today.getUTCDate(), lastDay));
  return d.toISOString().slice(0, 10);
}

interface TestRecord {
  licenseStatus: string;
  violations?: { acd: string; description: string; ago: Ago }[];
  accidents?: { atFault: boolean; injuries: boolean; ago: Ago }[];
}

/**
 * The sandbox's test driving records (docs/sandbox.md, "Test driving records"): licensed 20 years
 * before the request, events months before it, so each record's score stays the same for months.
 */
export const TEST_RECORDS: Record<string, TestRecord> = {
  sbx_mvr_clean: { licenseStatus: 'VALID' },
  sbx_mvr_speeding: {
    licenseStatus: 'VALID',
    violations: [{ acd: 'S92', description: 'Speeding 11-15 over', ago: { months: 6 } }],
  },
  sbx_mvr_at_fault: {
    licenseStatus: 'VALID', accidents: [{ atFault: true, injuries: true, ago: { months: 6 } }],
  },
  sbx_mvr_dui: {
    licenseStatus: 'VALID',
    violations: [{ acd: 'A21', description: 'Driving under the influence', ago: { months: 18 } }],
  },
  sbx_mvr_suspended: { licenseStatus: 'SUSPENDED' },
};

/** The Source A report of a test record, its dates relative to `today`. */
function sourceA(id: string, record: TestRecord, today: Date): Json {
  return {
    id, object: 'motor_vehicle_report', report_type: 'full', full_name: 'Sandbox Driver',
    license_number: 'SBX0000000', license_state: 'MN', license_status: record.licenseStatus,
    license_class: 'D',
    issued_date: daysAgo(today, { years: 2 }), first_issued_date: daysAgo(today, { years: 20 }),
    expiration_date: daysAgo(today, { years: -3 }), restrictions: [], endorsements: [], suspensions: [],
    violations: (record.violations ?? []).map((v) => ({
      acd_code: v.acd, description: v.description, violation_date: daysAgo(today, v.ago), state: 'MN',
    })),
    accidents: (record.accidents ?? []).map((a) => ({
      accident_date: daysAgo(today, a.ago), at_fault: a.atFault, injuries: a.injuries, fatalities: false,
    })),
  };
}

/**
 * In a sandbox, a Source A body `{"testRecord": ID}` becomes that test record's full report (the text
 * then stored); anything else, and every live organisation's body, is kept as sent.
 */
export function expandTestRecord(
  em: EntityManager, source: MvrSource, text: string, now = new Date(),
): string {
  if (!inSandbox(em) || source !== 'SOURCE_A') return text;
  let body: unknown;
  try { body = JSON.parse(text); } catch { return text; }
  if (typeof body !== 'object' || body === null || Object.keys(body).join() !== 'testRecord') return text;
  const id = (body as { testRecord: unknown }).testRecord;
  const record = typeof id === 'string' ? TEST_RECORDS[id] : undefined;
  const known = Object.keys(TEST_RECORDS).join(', ');
  if (!record) throw badInput(`Unknown test record; one of ${known}`, 'report.testRecord');
  return JSON.stringify(sourceA(id as string, record, now));
}
