import type { LicenseStatus } from '../mvr/summary.ts';

/**
 * The relativity tables of the score model. A relativity of 1 is the standard driver (valid
 * license, aged 30-65, ten or more years licensed, clean record, average territory); every
 * factor multiplies. Values are documented in docs/score-model.md; changing any of them changes
 * MODEL_VERSION.
 */

/** Driver age in whole years: [lowest age of the band, relativity]. */
export const AGE_BANDS: readonly (readonly [number, number])[] = [
  [0, 2.3], [18, 1.9], [21, 1.45], [25, 1.15], [30, 1.0], [66, 1.05], [71, 1.18], [76, 1.35], [81, 1.6],
];

/** Years since the license was first issued: [at least, relativity]; unknown uses UNKNOWN_EXPERIENCE. */
export const EXPERIENCE_BANDS: readonly (readonly [number, number])[] = [
  [0, 1.5], [1, 1.3], [3, 1.15], [5, 1.06], [10, 1.0],
];
export const UNKNOWN_EXPERIENCE = 1.1;

export const LICENSE_STATUS: Record<LicenseStatus, number> = {
  VALID: 1.0,
  LIMITED: 1.3,
  INCOMPLETE: 1.25,
  UNKNOWN: 1.25,
  EXPIRED: 1.35,
  NOT_VALID: 3.0,
  SUSPENDED: 3.0,
  REVOKED: 3.0,
  CANCELLED: 3.0,
  DENIED: 3.0,
};

/** Full-weight relativity of one conviction. */
export const VIOLATION = {
  ALCOHOL_DRUGS_MAJOR: 3.0,
  MAJOR: 2.4,
  SERIOUS: 1.5,
  MINOR_MOVING: 1.2,
  NON_MOVING: 1.03,
} as const;

/** Full-weight relativity of one accident. */
export const ACCIDENT = {
  AT_FAULT: 1.45,
  AT_FAULT_INJURY: 1.7,
  FAULT_UNKNOWN: 1.2,
  NOT_AT_FAULT: 1.08,
} as const;

/**
 * Clean-record discount (as insurers' violation- and claim-free discounts): applies when the
 * record holds no moving conviction, no at-fault or fault-unknown accident and no withdrawal that
 * still weighs (inside its look-back). Adding any such event can only remove it.
 */
export const CLEAN_RECORD = 0.85;

/** A withdrawal still running on the scoring day, and one that ended (weighted by years since its end). */
export const WITHDRAWAL = { ACTIVE: 1.5, ENDED: 1.25 } as const;

/**
 * Recency weights: [younger than this many years, weight]; older events weigh 0. The standard
 * look-back is three years; major offences count longer. Weights never increase with age, so an
 * older event never costs more than a newer one.
 */
export const STANDARD_RECENCY: readonly (readonly [number, number])[] = [[1, 1.0], [2, 0.8], [3, 0.6]];
export const MAJOR_RECENCY: readonly (readonly [number, number])[] = [[3, 1.0], [5, 0.5], [7, 0.3], [10, 0.15]];

export function recencyWeight(years: number, table: readonly (readonly [number, number])[]): number {
  const t = Math.max(0, years);
  for (const [limit, weight] of table) if (t < limit) return weight;
  return 0;
}

export function band(value: number, table: readonly (readonly [number, number])[]): number {
  let result = table[0][1];
  for (const [from, relativity] of table) if (value >= from) result = relativity;
  return result;
}

/**
 * Territory from the home ZIP's first three digits: dense urban cores rate higher, rural areas
 * lower. Illustrative relativities (traffic density and claim frequency rank), not filed rates.
 */
export const URBAN_ZIP3: Record<string, number> = {
  // New York City and Newark
  '100': 1.15, '101': 1.15, '102': 1.15, '103': 1.1, '104': 1.15, '110': 1.08, '111': 1.12, '112': 1.15, '113': 1.12, '114': 1.12, '070': 1.08, '071': 1.1, '072': 1.08, '073': 1.08,
  // Boston, Philadelphia, Baltimore, Washington
  '021': 1.07, '022': 1.07, '191': 1.12, '212': 1.08, '200': 1.07, '202': 1.07, '203': 1.07, '204': 1.07, '205': 1.07,
  // Atlanta, Miami, Detroit, Chicago
  '303': 1.07, '331': 1.14, '332': 1.14, '481': 1.14, '482': 1.15, '606': 1.12, '607': 1.1, '608': 1.1,
  // Dallas, Houston, Phoenix, Las Vegas
  '752': 1.07, '753': 1.07, '770': 1.1, '772': 1.1, '850': 1.04, '852': 1.03, '891': 1.07,
  // Los Angeles, Oakland, San Francisco
  '900': 1.14, '902': 1.1, '903': 1.1, '904': 1.08, '905': 1.08, '906': 1.08, '907': 1.08, '908': 1.08, '913': 1.07, '917': 1.05, '918': 1.05, '945': 1.05, '946': 1.08, '941': 1.07,
};

/** Outside the urban list: by the ZIP's first digit (national area). */
export const REGION_BY_FIRST_DIGIT: readonly number[] = [1.0, 1.0, 1.0, 1.04, 0.95, 0.9, 0.96, 1.0, 0.95, 1.0];

export function territoryRelativity(homeZip: string): number {
  const zip3 = homeZip.slice(0, 3);
  return URBAN_ZIP3[zip3] ?? REGION_BY_FIRST_DIGIT[Number(homeZip[0])] ?? 1.0;
}
