import type { LicenseStatus, MvrSummary, ViolationSummary } from '../mvr/summary.ts';
import { classifyAcd } from '../mvr/acd.ts';
import { addYears, fromDay, toDay, YEAR_DAYS } from './dates.ts';
import { URBAN_ZIP3 } from './factors.ts';
import { poisson, seededRandom, weighted } from '../../platform/random.ts';
import type { ScoreInput } from './relativity.ts';

/**
 * The reference population the score is calibrated on: synthetic drivers drawn with a seeded PRNG
 * from the documented base rates below (rounded from public US figures: FHWA licensed drivers by
 * age, NHTSA crash involvement, typical conviction frequencies). Same seed and size, same population.
 */
export const POPULATION = {
  seed: 20_261_122,
  size: 20_000,
  /** Every synthetic driver is scored as of this day, so the population never depends on the clock. */
  asOf: '2026-01-01',
  /** Licensed drivers by age band: [from, to, share]. */
  ageBands: [[16, 17, 0.02], [18, 20, 0.045], [21, 24, 0.065], [25, 29, 0.085], [30, 39, 0.17], [40, 49, 0.16],
    [50, 59, 0.17], [60, 65, 0.095], [66, 70, 0.08], [71, 75, 0.06], [76, 90, 0.05]] as const,
  /** Age at first license: [from, to, share]. */
  firstLicenseAge: [[16, 16, 0.55], [17, 17, 0.15], [18, 18, 0.12], [19, 24, 0.12], [25, 40, 0.06]] as const,
  /** Share living in a dense urban core (the URBAN_ZIP3 prefixes); the rest anywhere else. */
  urbanShare: 0.3,
  /** Events per driver per licensed year (last ten years at most), before the age multipliers. */
  annualRates: {
    minorMoving: 0.09, nonMoving: 0.03, serious: 0.02, majorOther: 0.002, dui: 0.005,
    atFaultAccident: 0.04, notAtFaultAccident: 0.03, faultUnknownAccident: 0.005, otherWithdrawal: 0.004,
  },
  /** Multipliers of the annual rates for young, younger-adult, older and oldest drivers. */
  ageRateMultiplier: { under25: { violation: 1.8, accident: 2.0 }, under30: { violation: 1.3, accident: 1.3 }, over65: { violation: 0.7, accident: 1.1 }, over75: { violation: 0.6, accident: 1.6 } },
  injuryShare: 0.25,
  /** A DUI conviction withdraws the license for six months; other withdrawals last three. */
  duiWithdrawalMonths: 6,
  otherWithdrawalMonths: 3,
  /** License status when no withdrawal is running. */
  licenseStatus: [['VALID', 0.965], ['LIMITED', 0.01], ['EXPIRED', 0.015], ['INCOMPLETE', 0.005], ['NOT_VALID', 0.005]] as const,
} as const;

const CODES = { minorMoving: ['S93', 'S92', 'M14', 'M42'], nonMoving: ['E01', 'D70'], serious: ['S95', 'M80', 'M21'], majorOther: ['B01', 'B14'], dui: ['A21', 'A20'] };

/** Generates the reference population (deterministic for a given seed and size). */
export function referencePopulation(seed: number = POPULATION.seed, size: number = POPULATION.size): ScoreInput[] {
  const random = seededRandom(seed);
  const uniformInt = (from: number, to: number) => from + Math.floor(random() * (to - from + 1));
  const band = (bands: readonly (readonly [number, number, number])[]) => {
    const [from, to] = weighted(random, bands.map((b) => [b, b[2]] as const));
    return uniformInt(from, to);
  };
  const asOfDay = toDay(POPULATION.asOf);
  const urban = Object.keys(URBAN_ZIP3);
  const people: ScoreInput[] = [];
  for (let i = 0; i < size; i += 1) {
    const age = band(POPULATION.ageBands);
    const dateOfBirth = fromDay(asOfDay - (age + random()) * YEAR_DAYS);
    const firstAge = Math.min(age, band(POPULATION.firstLicenseAge));
    const yearsLicensed = Math.max(0.1, age - firstAge + random());
    const firstIssueDate = fromDay(asOfDay - yearsLicensed * YEAR_DAYS);
    const zip3 = random() < POPULATION.urbanShare ? urban[uniformInt(0, urban.length - 1)] : String(uniformInt(10, 999)).padStart(3, '0');
    const homeZip = `${zip3}${String(uniformInt(0, 99)).padStart(2, '0')}`;

    const m = POPULATION.ageRateMultiplier;
    const mult = age < 25 ? m.under25 : age < 30 ? m.under30 : age > 75 ? m.over75 : age > 65 ? m.over65 : { violation: 1, accident: 1 };
    const window = Math.min(10, yearsLicensed);
    const when = () => fromDay(asOfDay - random() * window * YEAR_DAYS);
    const count = (rate: number, multiplier: number) => poisson(random, rate * multiplier * window);
    const r = POPULATION.annualRates;

    const violations: ViolationSummary[] = [];
    const withdrawals: MvrSummary['withdrawals'] = [];
    const addViolations = (kind: keyof typeof CODES, rate: number) => {
      for (let k = count(rate, mult.violation); k > 0; k -= 1) {
        const code = CODES[kind][uniformInt(0, CODES[kind].length - 1)];
        const acd = classifyAcd(code);
        const date = when();
        violations.push({ acdCode: code, category: acd.category, severity: acd.severity, severityBasis: 'ACD', moving: acd.moving, date, violationDate: date, convictionDate: null, description: null });
        if (kind === 'dui') withdrawals.push({ acdCode: code, startDate: date, endDate: addYears(date, POPULATION.duiWithdrawalMonths / 12), description: null });
      }
    };
    addViolations('minorMoving', r.minorMoving);
    addViolations('nonMoving', r.nonMoving);
    addViolations('serious', r.serious);
    addViolations('majorOther', r.majorOther);
    addViolations('dui', r.dui);
    for (let k = count(r.otherWithdrawal, 1); k > 0; k -= 1) {
      const start = when();
      withdrawals.push({ acdCode: 'D35', startDate: start, endDate: addYears(start, POPULATION.otherWithdrawalMonths / 12), description: null });
    }
    const accidents: MvrSummary['accidents'] = [];
    const addAccidents = (rate: number, atFault: boolean | null) => {
      for (let k = count(rate, mult.accident); k > 0; k -= 1) accidents.push({ date: when(), atFault, injuries: random() < POPULATION.injuryShare, fatalities: false, description: null });
    };
    addAccidents(r.atFaultAccident, true);
    addAccidents(r.notAtFaultAccident, false);
    addAccidents(r.faultUnknownAccident, null);

    const withdrawn = withdrawals.some((w) => w.endDate === null || w.endDate > POPULATION.asOf);
    const status: LicenseStatus = withdrawn ? 'SUSPENDED' : weighted(random, POPULATION.licenseStatus);
    people.push({
      dateOfBirth, homeZip, asOf: POPULATION.asOf,
      mvr: {
        source: 'SOURCE_A', providerReportId: `ref-${i}`,
        license: { status, reportedStatus: status, number: null, state: null, licenseClass: null, issueDate: null, firstIssueDate, expirationDate: null, restrictions: [], endorsements: [] },
        violations, accidents, withdrawals,
      },
    });
  }
  return people;
}
