import { classifyAcd } from './acd.ts';
import { bool, licenseStatus, objects, str, strings, type Json } from './common.ts';
import type { MvrSummary } from './summary.ts';

/** Source A (snake_case) into the summary. Expects a report that passed the Source A schema. */
export function normaliseSourceA(report: Json): MvrSummary {
  const reportedStatus = String(report.license_status);
  return {
    source: 'SOURCE_A',
    providerReportId: str(report.id),
    license: {
      status: licenseStatus(reportedStatus),
      reportedStatus,
      number: str(report.license_number),
      state: str(report.license_state),
      licenseClass: str(report.license_class),
      issueDate: str(report.issued_date),
      firstIssueDate: str(report.first_issued_date),
      expirationDate: str(report.expiration_date),
      restrictions: strings(report.restrictions),
      endorsements: strings(report.endorsements),
    },
    violations: objects(report.violations).map((v) => {
      const acd = classifyAcd(str(v.acd_code));
      const violationDate = str(v.violation_date);
      const convictionDate = str(v.conviction_date);
      return {
        acdCode: acd.code, category: acd.category, severity: acd.severity, severityBasis: 'ACD' as const, moving: acd.moving,
        date: (violationDate ?? convictionDate) as string, violationDate, convictionDate,
        description: str(v.description) ?? str(v.type),
      };
    }),
    accidents: objects(report.accidents).map((a) => ({
      date: String(a.accident_date),
      atFault: bool(a.at_fault),
      injuries: bool(a.injuries) ?? false,
      fatalities: bool(a.fatalities) ?? false,
      description: str(a.description),
    })),
    withdrawals: objects(report.suspensions).map((s) => ({
      acdCode: classifyAcd(str(s.acd_code)).code,
      startDate: String(s.start_date),
      endDate: str(s.end_date),
      description: str(s.description),
    })),
  };
}
