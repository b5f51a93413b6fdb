import type { MvrSummary, ViolationSummary } from '../mvr/summary.ts';
import { ageOn, yearsBetween } from './dates.ts';
import {
  ACCIDENT, AGE_BANDS, band, CLEAN_RECORD, EXPERIENCE_BANDS, LICENSE_STATUS, MAJOR_RECENCY, recencyWeight, STANDARD_RECENCY,
  territoryRelativity, UNKNOWN_EXPERIENCE, VIOLATION, WITHDRAWAL,
} from './factors.ts';

/** Reason codes: what raised the relativity (and so lowered the score). */
export const REASON_CODES = {
  LICENSE_NOT_VALID: 'License is suspended, revoked, cancelled, denied or otherwise not valid',
  LICENSE_STATUS: 'License is limited, expired, incomplete or of unknown status',
  ALCOHOL_DRUG_VIOLATION: 'Alcohol or drug conviction',
  MAJOR_VIOLATION: 'Major conviction (e.g. leaving the scene, fleeing, homicide)',
  SERIOUS_VIOLATION: 'Serious conviction (e.g. excessive speeding, reckless driving)',
  MINOR_VIOLATION: 'Minor moving conviction',
  NON_MOVING_VIOLATION: 'Non-moving conviction (equipment, paperwork)',
  AT_FAULT_ACCIDENT: 'At-fault accident',
  FAULT_UNKNOWN_ACCIDENT: 'Accident with fault not recorded',
  NOT_AT_FAULT_ACCIDENT: 'Not-at-fault accident',
  LICENSE_WITHDRAWAL: 'License withdrawal (suspension or revocation)',
  DRIVER_AGE: 'Driver age band',
  LIMITED_EXPERIENCE: 'Few years licensed',
  TERRITORY: 'Home ZIP territory',
} as const;
export type ReasonCode = keyof typeof REASON_CODES;
type FactorCode = ReasonCode | 'CLEAN_RECORD';

/** Events that cancel the clean-record discount while they still weigh. */
const CHARGEABLE = new Set<FactorCode>([
  'ALCOHOL_DRUG_VIOLATION', 'MAJOR_VIOLATION', 'SERIOUS_VIOLATION', 'MINOR_VIOLATION', 'AT_FAULT_ACCIDENT', 'FAULT_UNKNOWN_ACCIDENT', 'LICENSE_WITHDRAWAL',
]);

export interface ScoreInput {
  dateOfBirth: string;
  homeZip: string;
  mvr: MvrSummary;
  /** The scoring day (YYYY-MM-DD): ages and recency are measured to it. */
  asOf: string;
}

export interface Relativity {
  /** Product of every factor. */
  relativity: number;
  /** ln of the factors above 1, summed per reason code. */
  penalties: Partial<Record<ReasonCode, number>>;
}

const weighted = (base: number, weight: number) => 1 + (base - 1) * weight;

function violationFactor(v: ViolationSummary, asOf: string): [ReasonCode, number] {
  const years = yearsBetween(v.date, asOf);
  if (v.severity === 'MAJOR') {
    const w = recencyWeight(years, MAJOR_RECENCY);
    return v.category === 'ALCOHOL_DRUGS'
      ? ['ALCOHOL_DRUG_VIOLATION', weighted(VIOLATION.ALCOHOL_DRUGS_MAJOR, w)]
      : ['MAJOR_VIOLATION', weighted(VIOLATION.MAJOR, w)];
  }
  const w = recencyWeight(years, STANDARD_RECENCY);
  if (v.severity === 'SERIOUS') return ['SERIOUS_VIOLATION', weighted(VIOLATION.SERIOUS, w)];
  return v.moving ? ['MINOR_VIOLATION', weighted(VIOLATION.MINOR_MOVING, w)] : ['NON_MOVING_VIOLATION', weighted(VIOLATION.NON_MOVING, w)];
}

/** Every factor of the multiplicative model for one driver and MVR. Pure and deterministic. */
export function relativityOf(input: ScoreInput): Relativity {
  const { mvr, asOf } = input;
  const factors: [FactorCode, number][] = [];

  factors.push([LICENSE_STATUS[mvr.license.status] >= LICENSE_STATUS.NOT_VALID ? 'LICENSE_NOT_VALID' : 'LICENSE_STATUS', LICENSE_STATUS[mvr.license.status]]);
  for (const v of mvr.violations) factors.push(violationFactor(v, asOf));
  for (const a of mvr.accidents) {
    const w = recencyWeight(yearsBetween(a.date, asOf), STANDARD_RECENCY);
    if (a.atFault === true) factors.push(['AT_FAULT_ACCIDENT', weighted(a.injuries || a.fatalities ? ACCIDENT.AT_FAULT_INJURY : ACCIDENT.AT_FAULT, w)]);
    else if (a.atFault === null) factors.push(['FAULT_UNKNOWN_ACCIDENT', weighted(ACCIDENT.FAULT_UNKNOWN, w)]);
    else factors.push(['NOT_AT_FAULT_ACCIDENT', weighted(ACCIDENT.NOT_AT_FAULT, w)]);
  }
  for (const wd of mvr.withdrawals) {
    if (wd.startDate > asOf) continue;
    const active = wd.endDate === null || wd.endDate > asOf;
    factors.push(['LICENSE_WITHDRAWAL', active ? WITHDRAWAL.ACTIVE : weighted(WITHDRAWAL.ENDED, recencyWeight(yearsBetween(wd.endDate as string, asOf), STANDARD_RECENCY))]);
  }
  const chargeable = factors.some(([code, factor]) => factor > 1 && CHARGEABLE.has(code));
  if (!chargeable) factors.push(['CLEAN_RECORD', CLEAN_RECORD]);
  factors.push(['DRIVER_AGE', band(ageOn(input.dateOfBirth, asOf), AGE_BANDS)]);
  const firstIssued = mvr.license.firstIssueDate ?? mvr.license.issueDate;
  factors.push(['LIMITED_EXPERIENCE', firstIssued ? band(yearsBetween(firstIssued, asOf), EXPERIENCE_BANDS) : UNKNOWN_EXPERIENCE]);
  factors.push(['TERRITORY', territoryRelativity(input.homeZip)]);

  let logSum = 0;
  const penalties: Partial<Record<ReasonCode, number>> = {};
  for (const [code, factor] of factors) {
    const ln = Math.log(factor);
    logSum += ln;
    if (ln > 0 && code !== 'CLEAN_RECORD') penalties[code] = (penalties[code] ?? 0) + ln;
  }
  return { relativity: Math.exp(logSum), penalties };
}

/** Up to four reason codes, the largest penalty first (ties by code, so the order is stable). */
export function topReasons(penalties: Relativity['penalties'], limit = 4): ReasonCode[] {
  return (Object.entries(penalties) as [ReasonCode, number][])
    .filter(([, ln]) => ln > 1e-9)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([code]) => code);
}
