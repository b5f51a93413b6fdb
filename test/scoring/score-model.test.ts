import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyAcd } from '../../subgraphs/scoring/mvr/acd.ts';
import type { AccidentSummary, LicenseStatus, MvrSummary, ViolationSummary } from '../../subgraphs/scoring/mvr/summary.ts';
import { LICENSE_STATUSES } from '../../subgraphs/scoring/mvr/summary.ts';
import { ANCHORS, calibrate, currentCalibration, scoreFromRelativity } from '../../subgraphs/scoring/model/calibration.ts';
import { addYears, fromDay, toDay } from '../../subgraphs/scoring/model/dates.ts';
import { POPULATION, referencePopulation } from '../../subgraphs/scoring/model/population.ts';
import { relativityOf } from '../../subgraphs/scoring/model/relativity.ts';
import { coverageScore, MODEL_VERSION, type ScoreInput } from '../../subgraphs/scoring/model/score.ts';

const AS_OF = '2026-11-22';
const asOfDay = toDay(AS_OF);

// ---- arbitraries --------------------------------------------------------------------------------

/** A day between `minYears` and `maxYears` before the scoring day. */
const dayAgo = (minYears: number, maxYears: number) =>
  fc.integer({ min: Math.ceil(minYears * 365.25), max: Math.floor(maxYears * 365.25) }).map((days) => fromDay(asOfDay - days));

const zip = fc.integer({ min: 0, max: 99_999 }).map((n) => String(n).padStart(5, '0'));
const acdCode = fc.tuple(fc.constantFrom(...'ABDEFMSUWQZ'), fc.integer({ min: 0, max: 99 })).map(([l, n]) => `${l}${String(n).padStart(2, '0')}`);
const severity = fc.option(fc.constantFrom('MINOR', 'SERIOUS', 'MAJOR') as fc.Arbitrary<'MINOR' | 'SERIOUS' | 'MAJOR'>, { nil: undefined });

const violationAt = (code: string, date: string, stated?: 'MINOR' | 'SERIOUS' | 'MAJOR'): ViolationSummary => {
  const acd = classifyAcd(code);
  return { acdCode: acd.code, category: acd.category, severity: stated ?? acd.severity, severityBasis: stated ? 'REPORTED' : 'ACD', moving: acd.moving, date, violationDate: date, convictionDate: null, description: null };
};
const violation = fc.tuple(acdCode, dayAgo(0, 15), severity).map(([code, date, s]) => violationAt(code, date, s));
const accident = fc.record({
  date: dayAgo(0, 15), atFault: fc.constantFrom(true, false, null), injuries: fc.boolean(), fatalities: fc.boolean(), description: fc.constant(null),
}) as fc.Arbitrary<AccidentSummary>;
const withdrawal = fc.tuple(dayAgo(0, 15), fc.option(fc.integer({ min: 30, max: 2000 }), { nil: null })).map(([start, days]) => ({
  acdCode: 'A21', startDate: start, endDate: days === null ? null : fromDay(toDay(start) + days), description: null,
}));

const mvr = (parts: { status: LicenseStatus; firstIssueDate: string | null; violations: ViolationSummary[]; accidents: AccidentSummary[]; withdrawals: MvrSummary['withdrawals'] }): MvrSummary => ({
  source: 'SOURCE_A', providerReportId: null,
  license: { status: parts.status, reportedStatus: parts.status, number: null, state: null, licenseClass: null, issueDate: null, firstIssueDate: parts.firstIssueDate, expirationDate: null, restrictions: [], endorsements: [] },
  violations: parts.violations, accidents: parts.accidents, withdrawals: parts.withdrawals,
});

/** Any driver: any age 16-95, any ZIP, any status, any history. */
const anyDriver: fc.Arbitrary<ScoreInput> = fc.record({
  age: fc.integer({ min: 16, max: 95 }),
  zip,
  status: fc.constantFrom(...LICENSE_STATUSES),
  yearsLicensed: fc.option(fc.double({ min: 0, max: 60, noNaN: true }), { nil: null }),
  violations: fc.array(violation, { maxLength: 5 }),
  accidents: fc.array(accident, { maxLength: 4 }),
  withdrawals: fc.array(withdrawal, { maxLength: 2 }),
}).map((d) => ({
  asOf: AS_OF, dateOfBirth: addYears(AS_OF, -d.age - 0.5), homeZip: d.zip,
  mvr: mvr({ status: d.status, firstIssueDate: d.yearsLicensed === null ? null : addYears(AS_OF, -d.yearsLicensed), violations: d.violations, accidents: d.accidents, withdrawals: d.withdrawals }),
}));

const score = (input: ScoreInput) => coverageScore(input).score;
const withMvr = (input: ScoreInput, change: Partial<MvrSummary>): ScoreInput => ({ ...input, mvr: { ...input.mvr, ...change } });

// ---- calibration --------------------------------------------------------------------------------

describe('calibration on the reference population', () => {
  it('is reproducible, puts the median at 500, the riskiest at 0-300 and the safest at 600-900 (figures printed)', () => {
    const population = referencePopulation();
    expect(population).toHaveLength(POPULATION.size);
    expect(referencePopulation(POPULATION.seed, 50)).toEqual(referencePopulation(POPULATION.seed, 50));
    const calibration = calibrate(population);
    expect(calibration, 'calibration.json is stale: run `npm run calibrate` and commit it').toEqual(currentCalibration());

    const scored = population.map((p) => scoreFromRelativity(relativityOf(p).relativity, calibration));
    const sorted = [...scored].sort((a, b) => a - b);
    const at = (q: number) => sorted[Math.floor(q * (sorted.length - 1))];
    const median = at(0.5);
    const share = (test: (s: number) => boolean) => scored.filter(test).length / scored.length;
    const relSorted = population.map((p) => relativityOf(p).relativity).sort((a, b) => a - b);
    const riskiestDecile = relSorted.slice(Math.ceil(relSorted.length * 0.9)).map((r) => scoreFromRelativity(r, calibration));
    const safest40 = relSorted.slice(0, Math.floor(relSorted.length * 0.4)).map((r) => scoreFromRelativity(r, calibration));

    const figures = {
      modelVersion: MODEL_VERSION, population: population.length, seed: POPULATION.seed,
      anchors: calibration.anchors.map((a) => `q${a.quantile} relativity ${a.relativity.toFixed(3)} -> ${a.score}`),
      median, mean: Math.round(scored.reduce((s, x) => s + x, 0) / scored.length),
      p01: at(0.01), p10: at(0.1), p25: at(0.25), p75: at(0.75), p90: at(0.9), p99: at(0.99), min: sorted[0], max: sorted[sorted.length - 1],
      shareAtMost300: share((s) => s <= 300).toFixed(3), shareAtLeast600: share((s) => s >= 600).toFixed(3),
      riskiestDecileMax: Math.max(...riskiestDecile), safest40Min: Math.min(...safest40),
    };
    console.log('calibration figures', JSON.stringify(figures, null, 2));

    expect(Math.abs(median - 500)).toBeLessThanOrEqual(10);
    expect(Math.max(...riskiestDecile)).toBeLessThanOrEqual(300);
    expect(Math.min(...riskiestDecile)).toBeGreaterThanOrEqual(0);
    expect(Math.min(...safest40)).toBeGreaterThanOrEqual(600);
    expect(Math.max(...safest40)).toBeLessThanOrEqual(900);
    expect(ANCHORS.map(([, s]) => s)).toEqual([900, 600, 500, 300, 100]);
  });

  it('scores a DUI within the last three years at most 300, whatever else the driver has', () => {
    let lowestRelativity = Infinity;
    fc.assert(fc.property(anyDriver, dayAgo(0, 2.99), fc.constantFrom('A20', 'A21', 'A22', 'A08'), (driver, date, code) => {
      const input = withMvr(driver, { violations: [...driver.mvr.violations, violationAt(code, date)] });
      lowestRelativity = Math.min(lowestRelativity, relativityOf(input).relativity);
      expect(score(input)).toBeLessThanOrEqual(300);
    }), { numRuns: 500 });
    // The safest possible DUI driver: valid license, aged 30-65, 10+ years, lowest territory, DUI 2.99 years ago.
    const best: ScoreInput = { asOf: AS_OF, dateOfBirth: '1980-01-01', homeZip: '55401', mvr: mvr({ status: 'VALID', firstIssueDate: '1998-01-01', violations: [violationAt('A21', addYears(AS_OF, -2.99))], accidents: [], withdrawals: [] }) };
    console.log('safest DUI-within-3-years profile scores', score(best));
    expect(score(best)).toBeLessThanOrEqual(300);
  });

  it('scores a clean record, ten-plus years licensed, aged 30-65, at least 600 in every ZIP', () => {
    fc.assert(fc.property(fc.integer({ min: 30, max: 65 }), fc.double({ min: 10, max: 49, noNaN: true }), zip, fc.integer({ min: 0, max: 364 }), (age, years, homeZip, days) => {
      fc.pre(years <= age - 15);
      const input: ScoreInput = {
        asOf: AS_OF, dateOfBirth: fromDay(toDay(addYears(AS_OF, -age)) - days), homeZip,
        mvr: mvr({ status: 'VALID', firstIssueDate: addYears(AS_OF, -years), violations: [], accidents: [], withdrawals: [] }),
      };
      expect(score(input)).toBeGreaterThanOrEqual(600);
    }), { numRuns: 1000 });
    const worst: ScoreInput = { asOf: AS_OF, dateOfBirth: '1961-11-22', homeZip: '10001', mvr: mvr({ status: 'VALID', firstIssueDate: '2016-11-22', violations: [], accidents: [], withdrawals: [] }) };
    console.log('least favoured clean 30-65 10+ years profile (age 65, NYC, exactly 10 years) scores', score(worst));
  });
});

// ---- monotonicity -------------------------------------------------------------------------------

describe('monotonicity (fast-check)', () => {
  it('adding a violation never raises a score', () => {
    fc.assert(fc.property(anyDriver, violation, (driver, extra) => {
      expect(score(withMvr(driver, { violations: [...driver.mvr.violations, extra] }))).toBeLessThanOrEqual(score(driver));
    }), { numRuns: 1000 });
  });

  it('adding an at-fault accident never raises a score', () => {
    fc.assert(fc.property(anyDriver, accident, (driver, extra) => {
      const atFault = { ...extra, atFault: true };
      expect(score(withMvr(driver, { accidents: [...driver.mvr.accidents, atFault] }))).toBeLessThanOrEqual(score(driver));
    }), { numRuns: 1000 });
  });

  it('an older violation never lowers a score more than the same violation newer', () => {
    fc.assert(fc.property(anyDriver, acdCode, severity, dayAgo(0, 15), dayAgo(0, 15), (driver, code, stated, d1, d2) => {
      const [older, newer] = d1 <= d2 ? [d1, d2] : [d2, d1];
      const withOlder = score(withMvr(driver, { violations: [...driver.mvr.violations, violationAt(code, older, stated)] }));
      const withNewer = score(withMvr(driver, { violations: [...driver.mvr.violations, violationAt(code, newer, stated)] }));
      expect(withOlder).toBeGreaterThanOrEqual(withNewer);
    }), { numRuns: 1000 });
  });

  it('a higher relativity never maps to a higher score, and scores stay within 0-900', () => {
    fc.assert(fc.property(fc.double({ min: 0.01, max: 1000, noNaN: true }), fc.double({ min: 0.01, max: 1000, noNaN: true }), (a, b) => {
      const [lo, hi] = a <= b ? [a, b] : [b, a];
      const sLo = scoreFromRelativity(lo);
      const sHi = scoreFromRelativity(hi);
      expect(sHi).toBeLessThanOrEqual(sLo);
      expect(sLo).toBeLessThanOrEqual(900);
      expect(sHi).toBeGreaterThanOrEqual(0);
    }));
  });
});

describe('result', () => {
  it('is deterministic, versioned and explains itself with at most four reasons, largest first', () => {
    fc.assert(fc.property(anyDriver, (driver) => {
      const a = coverageScore(driver);
      expect(coverageScore(structuredClone(driver))).toEqual(a);
      expect(a.modelVersion).toBe(MODEL_VERSION);
      expect(a.reasons.length).toBeLessThanOrEqual(4);
      expect(Number.isInteger(a.score)).toBe(true);
    }), { numRuns: 300 });
    const input: ScoreInput = {
      asOf: AS_OF, dateOfBirth: '2006-01-01', homeZip: '60601',
      mvr: mvr({ status: 'SUSPENDED', firstIssueDate: '2024-06-01', violations: [violationAt('A21', '2026-01-10'), violationAt('S93', '2026-05-01'), violationAt('E01', '2026-05-01')], accidents: [{ date: '2026-02-01', atFault: true, injuries: true, fatalities: false, description: null }], withdrawals: [] }),
    };
    const result = coverageScore(input);
    expect(result.reasons.map((r) => r.code)).toEqual(['ALCOHOL_DRUG_VIOLATION', 'LICENSE_NOT_VALID', 'DRIVER_AGE', 'AT_FAULT_ACCIDENT']);
    expect(result.score).toBe(0);
    const clean: ScoreInput = { ...input, dateOfBirth: '1980-01-01', homeZip: '55401', mvr: mvr({ status: 'VALID', firstIssueDate: '2000-01-01', violations: [], accidents: [], withdrawals: [] }) };
    expect(coverageScore(clean)).toMatchObject({ score: 900, reasons: [] });
  });
});
