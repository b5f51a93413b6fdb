/** The one internal shape both MVR formats are normalised into; the score model reads only this. */

export const MVR_SOURCES = ['SOURCE_A', 'SOURCE_B'] as const;
export type MvrSource = (typeof MVR_SOURCES)[number];

export const SEVERITIES = ['MINOR', 'SERIOUS', 'MAJOR'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** ACD categories (first letter of the code), as the AAMVA Code Dictionary groups them. */
export const ACD_CATEGORIES = ['ALCOHOL_DRUGS', 'DUTIES_FAILED', 'EQUIPMENT', 'MANEUVERS', 'SPEEDING', 'UNCLASSIFIED', 'WITHDRAWAL'] as const;
export type AcdCategory = (typeof ACD_CATEGORIES)[number];

/**
 * License status on one scale for both providers. NOT_VALID, SUSPENDED, REVOKED, CANCELLED and
 * DENIED all mean the person may not drive; UNKNOWN is a value neither provider documents.
 */
export const LICENSE_STATUSES = ['VALID', 'LIMITED', 'INCOMPLETE', 'EXPIRED', 'NOT_VALID', 'SUSPENDED', 'REVOKED', 'CANCELLED', 'DENIED', 'UNKNOWN'] as const;
export type LicenseStatus = (typeof LICENSE_STATUSES)[number];

export interface LicenseSummary {
  status: LicenseStatus;
  /** The provider's own spelling. */
  reportedStatus: string;
  number: string | null;
  state: string | null;
  licenseClass: string | null;
  issueDate: string | null;
  firstIssueDate: string | null;
  expirationDate: string | null;
  restrictions: string[];
  endorsements: string[];
}

export interface ViolationSummary {
  /** Upper-cased ACD code as reported (unknown codes kept); null when the provider sent none. */
  acdCode: string | null;
  category: AcdCategory;
  severity: Severity;
  /** REPORTED when the provider stated the severity, ACD when it came from the code. */
  severityBasis: 'REPORTED' | 'ACD';
  /** False for non-moving offences (equipment, paperwork). */
  moving: boolean;
  /** Offence date, or the conviction date when the offence date is unknown. */
  date: string;
  violationDate: string | null;
  convictionDate: string | null;
  description: string | null;
}

export interface AccidentSummary {
  date: string;
  /** null when the state does not record fault. */
  atFault: boolean | null;
  injuries: boolean;
  fatalities: boolean;
  description: string | null;
}

export interface WithdrawalSummary {
  acdCode: string | null;
  startDate: string;
  endDate: string | null;
  description: string | null;
}

export interface MvrSummary {
  source: MvrSource;
  providerReportId: string | null;
  license: LicenseSummary;
  violations: ViolationSummary[];
  accidents: AccidentSummary[];
  withdrawals: WithdrawalSummary[];
}
