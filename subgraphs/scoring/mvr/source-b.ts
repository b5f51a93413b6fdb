import { classifyAcd, parseSeverity } from './acd.ts';
import { bool, licenseStatus, objects, str, strings, type Json } from './common.ts';
import type { MvrSummary } from './summary.ts';

/**
 * Source B (camelCase, one list of events) into the summary: CONVICTION events are violations,
 * ACCIDENT events accidents, WITHDRAWAL events withdrawals; other event types are kept in the
 * stored report and not scored. A stated severity wins over the ACD code's.
 */
export function normaliseSourceB(report: Json): MvrSummary {
  const license = report.license as Json;
  const events = objects(report.events);
  const ofType = (type: string) => events.filter((e) => String(e.eventType).trim().toUpperCase() === type);
  const reportedStatus = String(license.status);
  return {
    source: 'SOURCE_B',
    providerReportId: str(report.reportId),
    license: {
      status: licenseStatus(reportedStatus),
      reportedStatus,
      number: str(license.number),
      state: str(license.jurisdiction),
      licenseClass: str(license.class),
      issueDate: str(license.issueDate),
      firstIssueDate: str(license.originalIssueDate),
      expirationDate: str(license.expirationDate),
      restrictions: strings(license.restrictions),
      endorsements: strings(license.endorsements),
    },
    violations: ofType('CONVICTION').map((e) => {
      const acd = classifyAcd(str(e.acdCode));
      const stated = parseSeverity(e.severity);
      return {
        acdCode: acd.code, category: acd.category, severity: stated ?? acd.severity, severityBasis: stated ? 'REPORTED' as const : 'ACD' as const,
        moving: acd.moving, date: String(e.eventDate), violationDate: String(e.eventDate), convictionDate: str(e.convictionDate),
        description: str(e.description),
      };
    }),
    accidents: ofType('ACCIDENT').map((e) => ({
      date: String(e.eventDate),
      atFault: bool(e.atFault),
      injuries: bool(e.injury) ?? false,
      fatalities: bool(e.fatality) ?? false,
      description: str(e.description),
    })),
    withdrawals: ofType('WITHDRAWAL').map((e) => ({
      acdCode: classifyAcd(str(e.acdCode)).code,
      startDate: String(e.eventDate),
      endDate: str(e.endDate),
      description: str(e.description),
    })),
  };
}
